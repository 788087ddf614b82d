# Example phrases the bot and the CLI offer (/help, /start buttons, inline suggestions, "describe the workload"):
# one per line. Each is understood by the parser (tests/test_prompt_length.py) and by the property tests of texts.
examples_list =
    13B LoRA
    70B QLoRA ctx 8k
    Qwen2.5-72B inference 32k
    qwen3-8b inference input 1k output 2k
    7B LoRA, 5k examples x 3 epochs
# Short ones, for a one-line hint inside a sentence (the /subscribe wizard).
examples_short =
    13B LoRA
    B200
    70B QLoRA under $2/h
