"""Writes a small word-level Hugging Face tokenizer to DIR, so that AIPerf runs
offline (its builtin tokenizer downloads an encoding; a hub name downloads a
model's files). The vocabulary covers the synthetic prompt corpus AIPerf ships
and the mock server's tokens; anything else is [UNK], one token per word.

Usage: python make_tokenizer.py DIR
"""

import sys

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

words = ["[UNK]", "[PAD]"] + ["tok%d" % i for i in range(256)] + ["w%d" % i for i in range(4096)]
tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")
fast.save_pretrained(sys.argv[1])
