export declare const HTTP2_CONSTANTS_USED: readonly string[];
export interface StandIn {
  builtin: string;
  importer: string;
  contents: string;
}
export declare function standIns(): StandIn[];
export declare function lazyBuiltinsPlugin(): { name: string; setup(build: unknown): void };
