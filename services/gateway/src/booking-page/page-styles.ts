/** Styles of the booking page: system fonts, visible focus, AA contrast, one column on small screens. */
export const BOOKING_PAGE_CSS = `
:root { --fg: #1d2330; --muted: #545d6e; --accent: #1f5fbf; --accent-fg: #fff; --bg: #f3f5f9; --card: #fff; --line: #d5dae3; --error: #a4161a; --ok: #17663a; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); line-height: 1.45; }
body { margin: 0; padding: 2rem 1rem; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem; }
.card { max-width: 44rem; margin: 0 auto; background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1.5rem 2rem 2rem; box-shadow: 0 2px 12px rgba(20, 30, 60, .06); }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 0 0 .5rem; }
.meta { color: var(--muted); margin: 0; font-weight: 500; }
.description { margin: .5rem 0 0; }
.status { min-height: 1.5rem; color: var(--muted); margin: 1rem 0; }
.status:empty { display: none; }
fieldset { border: 0; border-top: 1px solid var(--line); margin: 1.25rem 0 0; padding: 1rem 0 0; }
legend { font-weight: 600; font-size: 1.05rem; padding: 0 .5rem 0 0; }
.step { display: inline-block; width: 1.6rem; height: 1.6rem; line-height: 1.6rem; text-align: center; border-radius: 50%; background: var(--accent); color: var(--accent-fg); font-size: .9rem; margin-right: .35rem; }
.row { display: flex; gap: 1rem; flex-wrap: wrap; }
.field { display: flex; flex-direction: column; gap: .25rem; margin: .5rem 0; flex: 1 1 14rem; }
label { font-weight: 500; }
input, select, button { font: inherit; }
input[type=text], input[type=email], input[type=date], select { padding: .55rem .6rem; border: 1px solid #8a93a3; border-radius: 8px; background: #fff; color: var(--fg); }
input[aria-invalid=true] { border-color: var(--error); }
:focus-visible { outline: 3px solid #f0a400; outline-offset: 2px; }
/* Regions focused by the script (to be read out) are not controls: no focus ring on them. */
[tabindex="-1"]:focus { outline: none; }
.hint { color: var(--muted); font-size: .95rem; margin: .35rem 0; }
.error { color: var(--error); font-weight: 500; margin: .35rem 0; }
.chips { list-style: none; padding: 0; margin: .25rem 0 0; display: flex; flex-wrap: wrap; gap: .5rem; }
.chips button { border: 1px solid var(--accent); color: var(--accent); background: #fff; border-radius: 999px; padding: .3rem .8rem; cursor: pointer; }
.chips button[aria-pressed=true] { background: var(--accent); color: var(--accent-fg); }
.slots { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .5rem; margin-top: .5rem; }
.slot { position: relative; }
.slot input { position: absolute; opacity: 0; width: 1px; height: 1px; }
.slot label { display: block; text-align: center; padding: .6rem .4rem; border: 1px solid var(--accent); border-radius: 8px; color: var(--accent); cursor: pointer; font-variant-numeric: tabular-nums; }
.slot input:checked + label { background: var(--accent); color: var(--accent-fg); }
.slot input:focus-visible + label { outline: 3px solid #f0a400; outline-offset: 2px; }
button[type=submit] { margin-top: 1.25rem; background: var(--accent); color: var(--accent-fg); border: 0; border-radius: 8px; padding: .75rem 1.5rem; font-weight: 600; cursor: pointer; }
button[disabled] { opacity: .6; cursor: progress; }
.notice { border-left: 4px solid var(--error); background: #fdf1f1; padding: 1rem 1.25rem; border-radius: 6px; margin-top: 1rem; }
.confirmation { border-left: 4px solid var(--ok); background: #eef8f1; padding: 1rem 1.25rem; border-radius: 6px; margin-top: 1rem; }
.confirmation .when { font-size: 1.15rem; font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .75rem 0; }
dt { color: var(--muted); }
dd { margin: 0; word-break: break-all; }
[hidden] { display: none !important; }
@media (max-width: 30rem) { .card { padding: 1rem; } body { padding: .5rem; } }
`;
