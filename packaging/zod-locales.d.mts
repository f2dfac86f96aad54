/** Types of zod-locales.mjs's exports that the tests read. */
export declare function zodLocalesFolder(): string;
export declare function zodLocaleNames(folder?: string): string[];
export declare function localesStandIn(names: readonly string[]): string;
export declare function zodLocalesPlugin(): { name: string; setup(build: unknown): void };
