"""The same ONNX embedding model in Python's onnxruntime: the peer of the service's embedding throughput.

Reads a JSON array of texts, embeds each one alone (as the service does for dynamically quantised
graphs) with the model folder's tokenizer.json and onnx/model_quantized.onnx, pooling as asked, and
prints {"texts": n, "seconds": s} on stdout. Texts longer than the window are truncated here (the
service embeds them in windows, which only costs it more).

Usage: python onnxruntime_embed.py <model folder> <texts.json> <threads> <cls|mean>
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main() -> None:
    folder, texts_file, threads, pooling = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(texts_file, encoding="utf-8") as f:
        texts = json.load(f)
    tokenizer = Tokenizer.from_file(f"{folder}/tokenizer.json")
    tokenizer.enable_truncation(max_length=512)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(f"{folder}/onnx/model_quantized.onnx", options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    started = time.perf_counter()
    for text in texts:
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        vector = hidden[0, 0] if pooling == "cls" else hidden[0].mean(axis=0)
        vector = vector / np.linalg.norm(vector)
    print(json.dumps({"texts": len(texts), "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
