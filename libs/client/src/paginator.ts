import type { Page } from './types';

/**
 * A list call. `for await (const item of list)` walks every page in order; `page()` fetches one
 * page (the first, or the one a cursor names) with its `next_cursor`; `pages()` walks pages.
 * Nothing is requested until one of them is used, and each use starts again from the first page.
 */
export class Paginator<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  page(cursor?: string): Promise<Page<T>> {
    return this.fetchPage(cursor);
  }

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page; for small lists (mind memory on large ones). */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
