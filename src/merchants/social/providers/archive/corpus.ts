export type CorpusOptions = {tweets:number}; export function* generateCorpus(){}
