/**
 * The statements in one SQL text a pg client sends, split on the semicolons outside single-quoted
 * literals and trimmed, empty ones dropped: for benches and probes that count the statements of each round
 * trip (libs/messaging bench/count.bench.ts, services/calendar-sync bench/write-probe.ts). A simple-protocol
 * text may carry several (`PREPARE …; BEGIN; EXECUTE …`); an extended-protocol one (bind parameters) is one.
 *
 * A counting aid, not a SQL parser: a quote inside a literal is written doubled (`''`, as pg's escapeLiteral
 * writes it) and reads as leaving and re-entering it; semicolons inside double-quoted identifiers, dollar
 * quotes or comments are not told apart (the texts counted have none).
 */
export function statementsIn(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === "'") quoted = !quoted;
    if (ch === ';' && !quoted) {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
