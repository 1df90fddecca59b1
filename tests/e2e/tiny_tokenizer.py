"""A tokenizer the trainer tests build themselves, nothing downloaded: byte-level BPE
(any text decodes back exactly) trained on a few texts, with the chat template and
special tokens each trainer's test needs."""

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast


def byte_bpe(texts, specials, eos, pad, chat_template, vocab_size=400):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(specials), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=eos, pad_token=pad, chat_template=chat_template)
