/** The page's elements by id (page-html.ts): a missing one is a bug of the page, so it throws. */
export function el(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (!found) throw new Error(`booking page: no element #${id}`);
  return found;
}

export function inputEl(id: string): HTMLInputElement {
  return el(id) as HTMLInputElement;
}

export function selectEl(id: string): HTMLSelectElement {
  return el(id) as HTMLSelectElement;
}

export function buttonEl(id: string): HTMLButtonElement {
  return el(id) as HTMLButtonElement;
}

/** The live region (role="status"): loading, the number of free times, the outcome. */
export function say(text: string): void {
  el('status').textContent = text;
}
