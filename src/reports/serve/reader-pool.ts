import type { Analytics } from "../../analytics/duckdb.ts";

/** Up to `size` forks of the analytics database, made when first needed, lent one caller at a time. */
export class ReaderPool {
  private readonly idle: Analytics[] = [];
  private readonly waiting: ((db: Analytics) => void)[] = [];
  private made = 0;

  constructor(
    private readonly analytics: Analytics,
    private readonly size: number,
  ) {}

  async take(): Promise<Analytics> {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.made < this.size) {
      this.made += 1;
      try {
        return await this.analytics.fork();
      } catch (error) {
        this.made -= 1;
        throw error;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(db: Analytics): void {
    const next = this.waiting.shift();
    if (next) next(db);
    else this.idle.push(db);
  }
}
