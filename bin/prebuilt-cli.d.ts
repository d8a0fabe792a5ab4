export declare const BUILD_FILE: string;
export declare function currentBuild(root: string): string | undefined;
