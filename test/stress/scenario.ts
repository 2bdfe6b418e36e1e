/** One stress scenario: what it does, its goals, and the figures it measured. */
export interface Scenario {
  name: string;
  /** What it does and what it must show, for the printed table and docs/reliability.md. */
  about: string;
  run(options: ScenarioOptions): Promise<Outcome>;
}

export interface ScenarioOptions {
  /** A seed for the random moments and inputs, printed so a failing run can be repeated. */
  seed: number;
  /** Fewer rounds (the CI-sized run); the full run is the default. */
  quick: boolean;
  /** Progress for the operator (stderr). */
  say(message: string): void;
}

export interface Outcome {
  /** Measured figures, by name, in the order to print. */
  figures: Record<string, number | string>;
  /** Each goal missed, in one line; empty when every goal was met. */
  failures: string[];
}
