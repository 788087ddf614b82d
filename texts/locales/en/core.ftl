## What core says (core returns codes and values; these are their words): the workload parser, the defaults
## it assumes, and advice when nothing fits.

parse_cannot = Sorry, I could not read that workload.
parse_not_all = Sorry, I could not read all of that.
parse_understood = Understood: { $items }.
parse_understood_nothing = Understood: nothing yet.
parse_not_understood = Not understood: { $items }.
parse_item = «{ $fragment }»
parse_item_meaning = «{ $fragment }» — { $meaning }
parse_item_reason = «{ $fragment }» ({ $reason })
parse_try = Try for example: «13B LoRA», «70B QLoRA ctx 8k bs 4», «llama-3.1-8b lora r16 seq 4096», «Qwen2.5-72B inference 32k, 8 users»
parse_range = { $label } must be between { $lo } and { $hi }
parse_whole = { $label } must be a whole number
parse_gpu_unknown = this GPU is not in the catalog (a different memory size?)
parse_model_unknown = this model is not in the catalog: give its size (e.g. 13B), its Hugging Face name (org/name) or a config.json
parse_model_unknown_close = this model is not in the catalog; did you mean { $close }? Or give its size (e.g. 13B), its Hugging Face name (org/name) or a config.json
parse_not_llm = an image, video or speech model: GPU Radar sizes language models (LLMs) only
parse_online_rl = online reinforcement tuning (GRPO, PPO, RLOO, RLHF) is not sized yet: it samples answers while it trains, and its generation engine, groups of sampled answers and reward or value models take memory an estimate cannot guess. Offline preference tuning is: «7B LoRA DPO», «8B QLoRA ORPO», KTO, SimPO
parse_model_family = several models go by this name: { $members }. Which one? Add its size or full name, e.g. «{ $example }»
model_family_more = { $n } more { $n ->
        [one] model
       *[other] models
    }
parse_gguf_type = a GGUF type this estimator knows: { $known }
parse_run = run (inference unless a training method is named)
parse_noop = does not change memory, ignored
parse_number_no_unit = a number without a unit: write e.g. «ctx 4096», «bs 4», «8 GPU», «13B»
parse_four_bit = 4-bit weights
parse_quantized = quantized weights (4-bit unless the bits are said)
parse_training = training (the method is still to choose)
parse_contradicts = contradicts «{ $fragment }»
parse_either = Did you mean «{ $a }» or «{ $b }»?
parse_did_you_mean = Did you mean «{ $phrase }»?
parse_without = Leaving out { $words }, it reads «{ $phrase }».
parse_not_text = A workload must be text.
parse_too_long = That is too long for a workload ({ $n } { $n ->
        [one] character
       *[other] characters
    }, at most { $limit }): describe it in one short phrase.
parse_describe = Please describe the workload: the model (or its size) and what to do with it.
parse_out_of_range = Some values are out of range.
parse_lora_targets = LoRA targets are q, k, v, o, gate, up, down or all-linear
parse_lora_which = Which layers should LoRA adapt? e.g. «q,v» or «all-linear».
parse_size_format = a size looks like 13B, 0.5B or 8x7B
sentence = { $text }.

field_is = { $label }: { $value }
field_model = model
field_arch = architecture
field_params_b = model size
field_params_min_b = smallest size of the range
field_experts = experts
field_method = method
field_objective = objective
field_ref_precomputed = reference log-probs precomputed
field_quant = quantization
field_precision = precision
field_seq_len = sequence length
field_batch = micro-batch
field_grad_ckpt = gradient checkpointing
field_attention = attention
field_lora_rank = LoRA rank
field_lora_targets = LoRA targets
field_optimizer = optimizer
field_fused_ce = fused cross-entropy
field_packing = sequence packing
field_gpus = GPUs
field_strategy = multi-GPU strategy
field_offload = CPU offload
field_gpu = GPU
field_gpu_memory_gb = card memory
val_card_memory = { $gb } GB
assume_card_memory = cards of { $gb } GB: { $cards }
wl_card_memory_none = No card in the catalog has { $gb } GB of memory. Cards come with { $sizes } GB: name one of those sizes, or the card.
wl_card_memory_named = No { $gpu } has { $gb } GB of memory: name its size as the catalog lists it (e.g. «A100 80GB»), or only the card.
cards_of_memory = { $gb } GB card
field_kv_dtype = KV-cache type
field_concurrency = concurrent sequences
field_examples = examples
field_tokens_per_example = tokens per example
field_dataset_tokens = dataset tokens
field_epochs = epochs

val_method_inference = inference
val_method_full = full fine-tune
val_method_freeze = freeze (only the last layers train)
val_method_lora = LoRA
val_method_qlora = QLoRA
val_objective_sft = supervised (SFT)
val_objective_dpo = DPO
val_objective_ipo = IPO
val_objective_orpo = ORPO
val_objective_simpo = SimPO
val_objective_cpo = CPO
val_objective_kto = KTO
val_quant_none = none, 16-bit weights
val_offload_none = none
val_offload_optimizer = optimizer states
val_offload_all = parameters and optimizer
val_strategy_single = single GPU
val_strategy_tp = tensor parallel
val_strategy_layers = layers split across the GPUs
val_strategy_zero3 = ZeRO-3
val_strategy_zero2 = ZeRO-2
val_strategy_fsdp = FSDP
val_strategy_ddp = DDP
val_on = on
val_off = off
val_tokens = { NUMBER($n, useGrouping: 0) } { $n ->
        [one] token
       *[other] tokens
    }

wl_invalid = These settings do not make a valid workload.
wl_which_method = Which method? inference («70B inference 8k»), full fine-tune («7B full fine-tune»), freeze («7B freeze»), LoRA («13B LoRA»), QLoRA («70B QLoRA»).
wl_which_training = Which way to fine-tune { $name }? LoRA («{ $name } LoRA»), QLoRA on a 4-bit base, the least memory («{ $name } QLoRA»), all the weights («{ $name } full fine-tune») or frozen layers («{ $name } freeze»).
assume_typical_arch = architecture: { $size } read as a typical { $name } ({ $layers } { $layers ->
        [one] layer
       *[other] layers
    }, hidden { $hidden }, { $heads } { $heads ->
        [one] head
       *[other] heads
    } / { $kv_heads } KV { $kv_heads ->
        [one] head
       *[other] heads
    }, vocabulary { $vocab }); name the model or give its config.json for another one
assume_objective_pairs = { $name }: each pair's chosen and rejected answers run as one batch (two sequences an example; the batch and the examples count pairs, the training tokens both answers)
assume_objective_unpaired = { $name }: each answer trains as one sequence, with { $forwards } { $forwards ->
        [one] forward
       *[other] forwards
    } without gradients beside it (the policy on a mismatched answer for the KL term, the reference on both)
assume_objective_copy = the reference model is a second, frozen copy of the weights in GPU memory (TRL without precompute_ref_log_probs)
assume_objective_adapter_off = the reference is the base itself with the adapter switched off (TRL with PEFT): no second copy
assume_objective_no_reference = no reference model
assume_objective_precomputed = the reference's log-probs are computed before training (precompute_ref_log_probs): no reference in memory while training, the same compute
wl_no_reference = Only an objective with a reference model (DPO, IPO, KTO) has reference log-probs to precompute.
assume_why = { $what } ({ $why })
assume_size_range = sizes { $lo }–{ $hi }: sized for the largest, { $hi } (what fits it fits every size below)
wl_model_unknown = The model «{ $model }» is not in the catalog: give its size (e.g. 13B), its Hugging Face name (org/name) or its config.json.
wl_model_unknown_close = The model «{ $model }» is not in the catalog. Did you mean { $close }? Or give its size (e.g. 13B), its Hugging Face name (org/name) or its config.json.
wl_model_family = Several models go by the name «{ $model }»: { $members }. Which one? Give its size or full name, e.g. «{ $example }».
wl_experts_mismatch = { $name } has { $has ->
        [one] { $has } expert
       *[other] { $has } experts
    }, not { $said }.
wl_params_mismatch = { $name } has { $has }B parameters, not { $said }B: give either the model or the size.
wl_which_model = Which model? Give its size (13B, 8x7B) or its name (llama-3.1-8b, Qwen2.5-72B).
why_concurrency = you gave concurrent users
why_kv = you gave a KV-cache type
why_quant_inference = a GPTQ/AWQ/GGUF checkpoint is for inference
why_tp_inference = tensor parallel is for inference
wl_not_for_method = That does not apply to { $method }: { $labels }.
wl_gpu_unknown = The GPU «{ $gpu }» is not in the catalog.
wl_tp_heads = Tensor parallel over { $gpus } GPUs does not divide { $name }'s { $heads ->
        [one] { $heads } attention head
       *[other] { $heads } attention heads
    } / { $kv ->
        [one] { $kv } KV head
       *[other] { $kv } KV heads
    }: use 2, 4 or 8 GPUs.
wl_no_bf16 = { $gpu } has no bf16: use fp16.
why_no_bf16 = { $gpu } has no bf16
wl_quant_method = { $method } cannot use a { $quant } base (possible: { $allowed }).
wl_tp_training = Tensor parallel is modelled for inference; for training use zero3, fsdp or ddp.
wl_inference_strategy = For inference several GPUs split the model with tensor parallel (tp).
wl_single_many = «single» means one GPU, but { $gpus } GPUs were given.
wl_offload_strategy = CPU offload needs DeepSpeed ZeRO (zero2/zero3) or FSDP.
wl_offload_zero2 = Offloading the parameters needs ZeRO-3 (or FSDP); ZeRO-2 offloads the optimizer only.
why_offload_zero3 = CPU offload runs under DeepSpeed ZeRO-3
why_tp_serve = the usual way to serve on several GPUs
why_layers_serve = how llama.cpp, Ollama and transformers serve on several GPUs
why_ollama_quant = what Ollama pulls when the tag names no quantisation; say «fp16» or «q8_0» for another
why_fsdp_adapters = shards the frozen base across the GPUs
why_zero3 = shards weights, gradients and optimizer states
wl_kv_unknown = Unknown KV-cache type «{ $kv }» (possible: { $allowed }).
why_seq_example = long enough for one example
why_seq_limit = the whole context this model reads
why_examples_from_dataset = { $tokens } of data, each example { $per }
why_tpe_from_dataset = { $tokens } of data over { NUMBER($examples, useGrouping: 0) } { $examples ->
        [one] example
       *[other] examples
    }
wl_dataset_three = Examples, tokens per example and the dataset's tokens: give two of them, the third follows from those (e.g. «10k examples, 20M tokens»).
why_native_quant = the precision the weights are published in
wl_batch_concurrency = For inference the batch is the number of concurrent sequences: give one of them.

advice_more_gpus = It does not fit on { $have }x { $gpu }; { $count }x { $gpu } would hold it.
advice_bigger_gpu = The smallest configuration that fits: { $where }.
advice_offload_optimizer = Offload the optimizer states to CPU (DeepSpeed ZeRO-3 offload): fits on { $where } with about { $cpu } GiB of host RAM, at a large speed cost.
advice_offload_all = Offload parameters and optimizer states to CPU (DeepSpeed ZeRO-3 offload): fits on { $where } with about { $cpu } GiB of host RAM, at a large speed cost.
advice_qlora = QLoRA (4-bit base, LoRA adapters) fits on { $where }.
advice_more_nodes = Several nodes: { $nodes } { $nodes ->
        [one] node
       *[other] nodes
    } of 8x { $gpu } ({ $count } GPUs, { $strategy }).
advice_none = Nothing in the catalog holds this workload, even across { $nodes ->
        [one] { $nodes } node
       *[other] { $nodes } nodes
    }.
parse_negative = a size or a count cannot be negative
wl_context_too_long = { $name } reads at most { $limit ->
        [one] { $limit } token
       *[other] { $limit } tokens
    } of context ({ $said } asked): it cannot attend further. Ask for { $limit } or less, or name a model with a longer context.

## Hugging Face Hub lookups of models the catalog lacks (core.hub.HubError codes)
hub_looking = Looking up { $repo } on Hugging Face…
hub_error_not_found = There is no model «{ $repo }» on Hugging Face (or it has no config.json). Check the name, or give the model's size (e.g. 13B) or its config.json.
hub_error_gated = «{ $repo }» on Hugging Face is gated: accept its licence on the model page and set HF_TOKEN, or give the model's size (e.g. 13B) or its config.json.
hub_error_forbidden = The Hugging Face token does not open «{ $repo }»: accept the model's licence with that account, or give the model's size (e.g. 13B) or its config.json.
hub_error_offline = Hugging Face did not answer in time, so «{ $repo }» could not be looked up. Try again in a minute, or give the model's size (e.g. 13B) or its config.json.
hub_error_busy = You have asked for many new models on Hugging Face in a short time, so «{ $repo }» was not looked up. Try again in a minute, or give the model's size (e.g. 13B) or its config.json.
hub_error_unreadable = The config.json of «{ $repo }» is not one I can read (not a text transformer, or fields missing). Give the model's size (e.g. 13B) or a config.json with hidden_size, num_hidden_layers, num_attention_heads and vocab_size.

## Images of vision models
field_images = images
wl_no_vision = { $name } reads text only: it has no vision tower for images.
assume_image_tokens = images: { $images } × { $per ->
        [one] { $per } token
       *[other] { $per } tokens
    } = { $total ->
        [one] { $total } token
       *[other] { $total } tokens
    } added to the sequence

## Inference: the prompt and the generated tokens (issue 9)
field_prompt_len = prompt (input)
field_output_len = output (generated)
why_prompt_output = you gave input/output lengths
why_prompt_whole = the whole context counted as prompt, the worst case; say e.g. «input 1k output 2k» if you know them
why_prompt_rest = the context less the output
wl_prompt_output_context = Input { $prompt } + output { $output ->
        [one] { $output } token
       *[other] { $output } tokens
    } do not fit in a context of { $context }: give a longer context, or leave it out.
wl_prompt_context = The input ({ $prompt ->
        [one] { $prompt } token
       *[other] { $prompt } tokens
    }) is longer than the context ({ $context }).
wl_output_context = The output ({ $output ->
        [one] { $output } token
       *[other] { $output } tokens
    }) leaves no room for a prompt in a context of { $context }: give a longer context, or the input length.
field_engine = engine
why_engine_serve = several concurrent users are served by a serving engine
why_engine_one = one sequence: Hugging Face transformers generate
why_engine_train = the usual fine-tuning stack
why_engine_fused_ce = the engine's default
why_packing = examples packed into full sequences; padded batches ("padding") spend about { $waste } % of the computed tokens on pads with mixed-length data
wl_engine_training = { $engine } is for training: for inference name vllm, sglang, llama.cpp, transformers, tensorrt-llm or ollama.
wl_engine_inference = { $engine } serves models: for training name hf-trainer/peft, unsloth, llama-factory, axolotl, torchtune, deepspeed or liger.
engine_changes = What { $engine } changes
engine_note_claim = it claims { $share } % of each card at start-up and fills what the model does not use with KV-cache pages, so the workload must fit in that share
engine_note_chunk = prompts are prefilled in chunks of { $tokens ->
        [one] { $tokens } token
       *[other] { $tokens } tokens
    }, which bounds the prefill working set
engine_note_batched = { $n ->
        [one] { $n } prompt is prefilled
       *[other] all { $n } prompts are prefilled together
    } in one forward pass
engine_note_graphs = CUDA graphs keep about { $gib } GiB per GPU
engine_note_layer_split = several GPUs split the layers: they add memory, not speed (one request computes on one card at a time)
engine_note_mla_full = it caches full K/V heads for MLA, not the compressed latent
engine_note_window_full = sliding-window layers get a full-length cache
engine_note_upcast = PEFT's k-bit preparation keeps embeddings, LM head and norms in fp32 (+{ $gib } GiB)
engine_note_fused_ce = fused cross-entropy: no vocabulary-wide logits in fp32
engine_note_offload_ckpt = checkpointed activations wait in CPU RAM
engine_note_speed = training about { $x }x the speed of HF Trainer + PEFT
engine_note_fp16_acc = 16-bit prefill runs at the FP16-accumulate tensor rate (twice the FP32-accumulate one on GeForce cards)
engine_note_quant_kernel = quantised weights decode through the { $kernel } kernel, assumed as the engine's default for this format on the card ({ $share } % of the 16-bit decode bandwidth)
capability_fp8_marlin = FP8 weights compute in FP8 only on Ada / Hopper or newer (compute capability 8.9+); on Ampere (A100, A10, RTX 30) { $engine } runs them weight-only (W8A16, Marlin kernel) with 16-bit compute; V100, T4 and RTX 20 cannot run them
capability_fp8_native_only = FP8 weights need an Ada / Hopper card or newer (compute capability 8.9+): { $engine } has no fallback on A100, V100 or T4
capability_bf16_to_fp16 = V100, T4 and RTX 20 have no BF16: there training runs in FP16 with loss scaling (same memory)

# A slice of one card (vGPU / MIG), never said as a card: "1/20 A100 · 4 GB".
slice_ratio = { $k }/{ $n }
slice_percent = { $p }%
slice_label = { $share } { $gpu } · { $mem } GB
slice_label_nomem = { $share } { $gpu }

# Remedies when a workload does not fit (core/remedies.py): each is a change the estimate is re-run with.
remedy_was = { $label }: { $value } (was: { $was })
remedy_offload_optimizer = optimizer states offloaded to CPU (DeepSpeed ZeRO-3 offload)
remedy_offload_all = parameters and optimizer states offloaded to CPU (ZeRO-3 offload)
remedy_fused_ce = fused / chunked cross-entropy (Liger, Unsloth)
remedy_micro_batch_1 = micro-batch 1 with gradient accumulation (same effective batch)
remedy_qlora = QLoRA (4-bit base) instead
remedy_shorter_context = half the context
remedy_fp8 = FP8 weights
remedy_int4 = INT4 weights (GPTQ)
remedy_precompute_ref = the reference's log-probs computed before training (TRL precompute_ref_log_probs): no reference copy while training
remedy_zero3_more_cards = ZeRO-3 across more cards (several nodes)

# serving targets: a request rate and an answer speed (core.parser rules rate / speed, core.defaults)
field_request_rate = request rate
field_answer_tps = answer speed per user
field_total_tps = answer tokens a second in all
val_rate_s = { $n } { $n ->
        [one] request
       *[other] requests
    } a second
val_rate_m = { $n } { $n ->
        [one] request
       *[other] requests
    } a minute
val_rate_h = { $n } { $n ->
        [one] request
       *[other] requests
    } an hour
val_rate_d = { $n } { $n ->
        [one] request
       *[other] requests
    } a day
val_tps = { $n } tok/s
why_rate = a request rate or an answer speed is asked of a server
why_answer_tps = MLPerf's interactive serving target, 40 ms a token; say e.g. «30 tok/s per user» for yours
why_rate_output = the answer length of the LLMPerf benchmarks; say e.g. «output 500» for yours
why_rate_prompt = the prompt length of the LLMPerf benchmarks; say e.g. «input 2k» for yours
why_concurrency_rate = { $rate } × { $output } = { $demand } of answers at { $speed } each, by Little's law
why_concurrency_total = { $demand } of answers in all at { $speed } each, by Little's law
wl_rate_total = Give a request rate or a total speed, not both: each says how many answer tokens a second the server must produce.
wl_rate_too_many = That takes { $n } { $n ->
        [one] answer
       *[other] answers
    } at once ({ $demand } of answers at { $speed } each), more than one server is sized for ({ $max } at most): estimate one replica, e.g. with «{ NUMBER($max, useGrouping: 0) } { $max ->
        [one] user
       *[other] users
    }», and share the rate among replicas.
speed_target_rate = { $rate } ({ $demand } of answers), each answer at { $speed } or faster
speed_target_total = { $demand } of answers in all, each answer at { $speed } or faster
speed_target_each = each answer at { $speed } or faster
field_ttft_s = time to first token
val_ms = { $n } ms
val_s = { $n } s
speed_target_ttft = the first token within { $ttft }
speed_target_both = { $first }; { $second }
