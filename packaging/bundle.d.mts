/** Types of bundle.mjs's exports that the tests read. */
export declare const APP_FILES: Readonly<Record<string, string>>;
export declare function bundleCli(options: { repo: string; outfile: string; version: string }): Promise<unknown>;
export declare function asciiOnly(text: string): string;
export declare const BUILD_LINE_PREFIX: string;
