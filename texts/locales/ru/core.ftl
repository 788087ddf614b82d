## Что говорит core (core возвращает коды и значения, здесь их слова): разбор задачи, допущения и советы.

parse_cannot = Извините, не получилось разобрать задачу.
parse_not_all = Извините, я понял не всё.
parse_understood = Понял: { $items }.
parse_understood_nothing = Понял: пока ничего.
parse_not_understood = Не понял: { $items }.
parse_item = «{ $fragment }»
parse_item_meaning = «{ $fragment }» — { $meaning }
parse_item_reason = «{ $fragment }» ({ $reason })
parse_try = Попробуйте, например: «13B LoRA», «полное дообучение 7B», «70B QLoRA контекст 8k на 2x A100 80GB», «инференс 70B int4, контекст 32k, 8 пользователей»
parse_range = { $label }: допустимо от { $lo } до { $hi }
parse_whole = { $label }: нужно целое число
parse_gpu_unknown = такой GPU нет в каталоге (другой объём памяти?)
parse_model_unknown = этой модели нет в каталоге: укажите размер (например, 13B), имя на Hugging Face (org/name) или config.json
parse_model_unknown_close = этой модели нет в каталоге; может быть, { $close }? Или укажите размер (например, 13B), имя на Hugging Face (org/name) или config.json
parse_not_llm = это модель для изображений, видео или речи: GPU Radar считает только языковые модели (LLM)
parse_online_rl = онлайн-обучение с подкреплением (GRPO, PPO, RLOO, RLHF) пока не оценивается: оно генерирует ответы во время обучения, и движок генерации, группы сгенерированных ответов и модели награды или ценности занимают память, которую оценка не может угадать. Офлайн-обучение на предпочтениях оценивается: «7B LoRA DPO», «8B QLoRA ORPO», KTO, SimPO
parse_model_family = так называется несколько моделей: { $members }. Какая из них? Добавьте размер или полное имя, например «{ $example }»
model_family_more = ещё { $n } { $n ->
        [one] модель
        [few] модели
        [many] моделей
       *[other] модели
    }
parse_gguf_type = известные типы GGUF: { $known }
parse_run = запуск (инференс, если не указано обучение)
parse_noop = на память не влияет, не учитываю
parse_number_no_unit = число без единицы: напишите, например, «контекст 4096», «bs 4», «8 GPU», «13B»
parse_four_bit = 4-битные веса
parse_quantized = квантованные веса (4 бита, если разрядность не указана)
parse_training = обучение (метод ещё не выбран)
parse_contradicts = противоречит «{ $fragment }»
parse_either = Вы имели в виду «{ $a }» или «{ $b }»?
parse_did_you_mean = Вы имели в виду «{ $phrase }»?
parse_without = Если пропустить { $words }, получится «{ $phrase }».
parse_not_text = Задача должна быть текстом.
parse_too_long = Слишком длинно для описания задачи ({ $n } { $n ->
        [one] символ
        [few] символа
        [other] символа
       *[many] символов
    }, максимум { $limit }): опишите её одной короткой фразой.
parse_describe = Опишите задачу: модель (или её размер) и что с ней делать.
parse_out_of_range = Некоторые значения вне диапазона.
parse_lora_targets = слои LoRA: q, k, v, o, gate, up, down или all-linear
parse_lora_which = Какие слои адаптировать LoRA? Например, «q,v» или «all-linear».
parse_size_format = размер пишется как 13B, 0.5B или 8x7B
sentence = { $text }.

field_is = { $label }: { $value }
field_model = модель
field_arch = архитектура
field_params_b = размер модели
field_params_min_b = наименьший размер диапазона
field_experts = эксперты
field_method = метод
field_objective = цель обучения
field_ref_precomputed = лог-вероятности опорной модели заранее
field_quant = квантизация
field_precision = точность
field_seq_len = длина последовательности
field_batch = микробатч
field_grad_ckpt = пересчёт активаций (gradient checkpointing)
field_attention = реализация внимания
field_lora_rank = ранг LoRA
field_lora_targets = слои LoRA
field_optimizer = оптимизатор
field_packing = упаковка примеров
field_fused_ce = слитая cross-entropy (fused CE)
field_gpus = число GPU
field_strategy = стратегия на нескольких GPU
field_offload = выгрузка в CPU
field_gpu = видеокарта
field_gpu_memory_gb = память карты
val_card_memory = { $gb } ГБ
assume_card_memory = карты на { $gb } ГБ: { $cards }
wl_card_memory_none = В каталоге нет карты с { $gb } ГБ памяти. Бывают карты на { $sizes } ГБ: укажите один из этих объёмов или саму карту.
wl_card_memory_named = У { $gpu } нет версии на { $gb } ГБ: укажите объём, как в каталоге (например, «A100 80GB»), или только карту.
cards_of_memory = карта на { $gb } ГБ
field_kv_dtype = тип KV-кэша
field_concurrency = одновременных последовательностей
field_examples = примеров
field_tokens_per_example = токенов на пример
field_dataset_tokens = токенов в датасете
field_epochs = эпох

val_method_inference = инференс
val_method_full = полное дообучение
val_method_freeze = заморозка (обучаются только последние слои)
val_method_lora = LoRA
val_method_qlora = QLoRA
val_objective_sft = обычное дообучение (SFT)
val_objective_dpo = DPO
val_objective_ipo = IPO
val_objective_orpo = ORPO
val_objective_simpo = SimPO
val_objective_cpo = CPO
val_objective_kto = KTO
val_quant_none = нет, 16-битные веса
val_offload_none = нет
val_offload_optimizer = состояния оптимизатора
val_offload_all = параметры и оптимизатор
val_strategy_single = одна GPU
val_strategy_tp = тензорный параллелизм
val_strategy_layers = слои поровну между GPU
val_strategy_zero3 = ZeRO-3
val_strategy_zero2 = ZeRO-2
val_strategy_fsdp = FSDP
val_strategy_ddp = DDP
val_on = вкл.
val_off = выкл.
val_tokens = { NUMBER($n, useGrouping: 0) } { $n ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    }

wl_invalid = Эти параметры не складываются в корректную задачу.
wl_which_method = Какой метод? инференс («инференс 70B 8k»), полное дообучение («полное дообучение 7B»), заморозка («7B freeze»), LoRA («13B LoRA»), QLoRA («70B QLoRA»).
wl_which_training = Как дообучать { $name }? LoRA («{ $name } LoRA»), QLoRA на 4-битной базе, меньше всего памяти («{ $name } QLoRA»), все веса («полное дообучение { $name }») или с заморозкой слоёв («{ $name } freeze»).
assume_typical_arch = архитектура: { $size } — типичная { $name } ({ $layers } { $layers ->
        [one] слой
        [few] слоя
        [other] слоя
       *[many] слоёв
    }, скрытый размер { $hidden }, { $heads } { $heads ->
        [one] голова
        [few] головы
        [other] головы
       *[many] голов
    } / { $kv_heads } { $kv_heads ->
        [one] KV-голова
        [few] KV-головы
        [other] KV-головы
       *[many] KV-голов
    }, словарь { $vocab }); для другой модели укажите её название или config.json
assume_objective_pairs = { $name }: выбранный и отвергнутый ответы каждой пары идут одним батчем (две последовательности на пример; батч и примеры считаются парами, токены обучения — оба ответа)
assume_objective_unpaired = { $name }: каждый ответ обучается как одна последовательность, рядом { $forwards } { $forwards ->
        [one] прямой проход
        [few] прямых прохода
       *[many] прямых проходов
    } без градиентов (модель на несовпадающем ответе для KL-члена, опорная модель на обоих)
assume_objective_copy = опорная модель — вторая, замороженная копия весов в памяти GPU (TRL без precompute_ref_log_probs)
assume_objective_adapter_off = опорная модель — сама база с выключенным адаптером (TRL с PEFT): второй копии нет
assume_objective_no_reference = без опорной модели
assume_objective_precomputed = лог-вероятности опорной модели считаются до обучения (precompute_ref_log_probs): во время обучения её нет в памяти, вычислений столько же
wl_no_reference = Заранее посчитать лог-вероятности опорной модели можно только у цели с опорной моделью (DPO, IPO, KTO).
assume_why = { $what } ({ $why })
assume_size_range = размеры { $lo }–{ $hi }: посчитано для самого большого, { $hi } (что вмещает его, вмещает и меньшие)
wl_model_unknown = Модели «{ $model }» нет в каталоге: укажите её размер (например, 13B), имя на Hugging Face (org/name) или config.json.
wl_model_unknown_close = Модели «{ $model }» нет в каталоге. Может быть, { $close }? Или укажите её размер (например, 13B), имя на Hugging Face (org/name) или config.json.
wl_model_family = Так называется несколько моделей — «{ $model }»: { $members }. Какая из них? Укажите размер или полное имя, например «{ $example }».
wl_experts_mismatch = У { $name } экспертов { $has }, а не { $said }.
wl_params_mismatch = У { $name } { $has }B параметров, а не { $said }B: укажите либо модель, либо размер.
wl_which_model = Какая модель? Укажите размер (13B, 8x7B) или название (llama-3.1-8b, Qwen2.5-72B).
why_concurrency = указаны одновременные пользователи
why_kv = указан тип KV-кэша
why_quant_inference = чекпойнт GPTQ/AWQ/GGUF — для инференса
why_tp_inference = тензорный параллелизм — для инференса
wl_not_for_method = Это не относится к методу «{ $method }»: { $labels }.
wl_gpu_unknown = GPU «{ $gpu }» нет в каталоге.
wl_tp_heads = Тензорный параллелизм на { $gpus } GPU не делит { $heads ->
        [one] { $heads } голову
        [few] { $heads } головы
        [other] { $heads } головы
       *[many] { $heads } голов
    } внимания / { $kv ->
        [one] { $kv } KV-голову
        [few] { $kv } KV-головы
        [other] { $kv } KV-головы
       *[many] { $kv } KV-голов
    } { $name }: возьмите 2, 4 или 8 GPU.
wl_no_bf16 = У { $gpu } нет bf16: используйте fp16.
why_no_bf16 = у { $gpu } нет bf16
wl_quant_method = { $method } не работает с базой { $quant } (возможно: { $allowed }).
wl_tp_training = Тензорный параллелизм — для инференса; для обучения укажите zero3, fsdp или ddp.
wl_inference_strategy = Для инференса несколько GPU делят модель тензорным параллелизмом (tp).
wl_single_many = «single» означает одну GPU, а указано { $gpus }.
wl_offload_strategy = Выгрузка в CPU требует DeepSpeed ZeRO (zero2/zero3) или FSDP.
wl_offload_zero2 = Выгрузка параметров требует ZeRO-3 (или FSDP); ZeRO-2 выгружает только оптимизатор.
why_offload_zero3 = выгрузка в CPU работает через DeepSpeed ZeRO-3
why_tp_serve = обычный способ инференса на нескольких GPU
why_layers_serve = так llama.cpp, Ollama и transformers работают на нескольких GPU
why_ollama_quant = это Ollama скачивает, если в теге не указана квантизация; для другой укажите «fp16» или «q8_0»
why_fsdp_adapters = делит замороженную базу между GPU
why_zero3 = делит веса, градиенты и состояния оптимизатора
wl_kv_unknown = Неизвестный тип KV-кэша «{ $kv }» (возможно: { $allowed }).
why_seq_example = чтобы вместился один пример
why_seq_limit = весь контекст, который читает эта модель
why_examples_from_dataset = { $tokens } данных, на каждый пример { $per }
why_tpe_from_dataset = { $tokens } данных на { NUMBER($examples, useGrouping: 0) } { $examples ->
        [one] пример
        [few] примера
        [other] примера
       *[many] примеров
    }
wl_dataset_three = Примеры, токены на пример и токены датасета: укажите два из трёх, третье следует из них (например, «10k примеров, 20M токенов»).
why_native_quant = в этой точности опубликованы веса
wl_batch_concurrency = Для инференса батч — это число одновременных последовательностей: укажите что-то одно.

advice_more_gpus = На { $have }x { $gpu } не помещается; поместится на { $count }x { $gpu }.
advice_bigger_gpu = Самая скромная подходящая конфигурация: { $where }.
advice_offload_optimizer = Выгрузите состояния оптимизатора в оперативную память (DeepSpeed ZeRO-3 offload): поместится на { $where }, нужно около { $cpu } ГиБ ОЗУ, обучение будет заметно медленнее.
advice_offload_all = Выгрузите веса и состояния оптимизатора в оперативную память (DeepSpeed ZeRO-3 offload): поместится на { $where }, нужно около { $cpu } ГиБ ОЗУ, обучение будет заметно медленнее.
advice_qlora = QLoRA (4-битная база и LoRA-адаптеры) поместится на { $where }.
advice_more_nodes = Несколько узлов: { $nodes } { $nodes ->
        [one] узел
        [few] узла
        [other] узла
       *[many] узлов
    } по 8x { $gpu } ({ $count } GPU, { $strategy }).
advice_none = Ни одна конфигурация из каталога не вмещает эту задачу, даже на { $nodes ->
        [one] { $nodes } узле
       *[other] { $nodes } узлах
    }.
parse_negative = размер или количество не бывает отрицательным
wl_context_too_long = { $name } читает не больше { $limit ->
        [one] { $limit } токена
        [other] { $limit } токена
       *[many] { $limit } токенов
    } контекста (запрошено { $said }): дальше модель не видит. Укажите не больше { $limit } или модель с более длинным контекстом.

## Hugging Face Hub lookups of models the catalog lacks (core.hub.HubError codes)
hub_looking = Ищу { $repo } на Hugging Face…
hub_error_not_found = На Hugging Face нет модели «{ $repo }» (или у неё нет config.json). Проверьте название или укажите размер модели (например, 13B) либо её config.json.
hub_error_gated = Модель «{ $repo }» на Hugging Face закрыта: примите лицензию на странице модели и задайте HF_TOKEN — или укажите размер модели (например, 13B) либо её config.json.
hub_error_forbidden = Токен Hugging Face не открывает «{ $repo }»: примите лицензию модели с этой учётной записью или укажите размер модели (например, 13B) либо её config.json.
hub_error_offline = Hugging Face не ответил вовремя, поэтому найти «{ $repo }» не удалось. Попробуйте через минуту или укажите размер модели (например, 13B) либо её config.json.
hub_error_busy = Вы запросили много новых моделей на Hugging Face за короткое время, поэтому «{ $repo }» не искали. Попробуйте через минуту или укажите размер модели (например, 13B) либо её config.json.
hub_error_unreadable = Не могу прочитать config.json модели «{ $repo }» (это не текстовый трансформер или не хватает полей). Укажите размер модели (например, 13B) или config.json с hidden_size, num_hidden_layers, num_attention_heads и vocab_size.

## Images of vision models
field_images = изображения
wl_no_vision = { $name } работает только с текстом: у неё нет визуального энкодера для изображений.
assume_image_tokens = изображения: { $images } × { $per } { $per ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    } = { $total } { $total ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    } добавлено к последовательности

## Инференс: промпт и генерируемые токены (issue 9)
field_prompt_len = промпт (вход)
field_output_len = ответ (генерация)
why_prompt_output = указаны длины входа/выхода
why_prompt_whole = весь контекст считается промптом, худший случай; если знаете, укажите, например, «вход 1к выход 2к»
why_prompt_rest = контекст за вычетом ответа
wl_prompt_output_context = Вход { $prompt } + выход { $output } { $output ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    } не помещаются в контекст { $context }: укажите контекст длиннее или не указывайте его.
wl_prompt_context = Вход ({ $prompt } { $prompt ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    }) длиннее контекста ({ $context }).
wl_output_context = Ответ ({ $output } { $output ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    }) не оставляет места для промпта в контексте { $context }: укажите контекст длиннее или длину входа.
field_engine = движок
why_engine_serve = несколько одновременных пользователей обслуживает сервер инференса
why_engine_one = одна последовательность: Hugging Face transformers generate
why_engine_train = обычный стек дообучения
why_engine_fused_ce = так по умолчанию в этом движке
why_packing = примеры упакованы в полные последовательности; при паддинге («паддинг») на данных разной длины около { $waste } % вычисленных токенов уходит на заполнители
wl_engine_training = { $engine } — для обучения; для инференса укажите vllm, sglang, llama.cpp, transformers, tensorrt-llm или ollama.
wl_engine_inference = { $engine } — для инференса; для обучения укажите hf-trainer/peft, unsloth, llama-factory, axolotl, torchtune, deepspeed или liger.
engine_changes = Что меняет { $engine }
engine_note_claim = при запуске занимает { $share } % каждой карты и заполняет неиспользованное страницами KV-кэша, поэтому нагрузка должна уместиться в эту долю
engine_note_chunk = промпты обрабатываются кусками по { $tokens } { $tokens ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    } — это ограничивает рабочую память префилла
engine_note_batched = { $n ->
        [one] { $n } промпт обрабатывается
        [few] все { $n } промпта обрабатываются вместе
        [other] все { $n } промпта обрабатываются вместе
       *[many] все { $n } промптов обрабатываются вместе
    } за один проход
engine_note_graphs = CUDA-графы занимают около { $gib } ГиБ на GPU
engine_note_layer_split = несколько GPU делят слои: они добавляют память, но не скорость (запрос считается на одной карте за раз)
engine_note_mla_full = для MLA кэширует полные головы K/V, а не сжатый латент
engine_note_window_full = слоям со скользящим окном отводится кэш на весь контекст
engine_note_upcast = подготовка PEFT к k-bit обучению держит эмбеддинги, LM head и нормализации в fp32 (+{ $gib } ГиБ)
engine_note_fused_ce = слитая кросс-энтропия: логиты по всему словарю не хранятся в fp32
engine_note_offload_ckpt = сохранённые для чекпойнтинга активации ждут в ОЗУ
engine_note_speed = обучение примерно в { $x ->
        [few] { $x } раза
        [other] { $x } раза
       *[many] { $x } раз
    } быстрее HF Trainer + PEFT
engine_note_fp16_acc = 16-битный префилл идёт на скорости тензорных ядер с FP16-накоплением (вдвое выше FP32-накопления на GeForce)
engine_note_quant_kernel = квантованные веса декодируются ядром { $kernel }, принятым по умолчанию у этого движка для этого формата на такой карте ({ $share } % пропускной способности 16-битного декода)
capability_fp8_marlin = FP8-веса считаются в FP8 только на Ada / Hopper и новее (compute capability 8.9+); на Ampere (A100, A10, RTX 30) { $engine } запускает их только как веса (W8A16, ядро Marlin) с 16-битными вычислениями; V100, T4 и RTX 20 их не запускают
capability_fp8_native_only = FP8-весам нужна карта Ada / Hopper или новее (compute capability 8.9+): у { $engine } нет запасного пути на A100, V100 или T4
capability_bf16_to_fp16 = у V100, T4 и RTX 20 нет BF16: на них обучение идёт в FP16 с масштабированием потерь (память та же)

# Доля одной карты (vGPU / MIG), никогда не «карта»: «1/20 A100 · 4 ГБ».
slice_ratio = { $k }/{ $n }
slice_percent = { $p }{" "}%
slice_label = { $share } { $gpu } · { $mem } ГБ
slice_label_nomem = { $share } { $gpu }

# Что поможет, если задача не помещается (core/remedies.py): каждое — изменение, с которым оценка считается заново.
remedy_was = { $label }: { $value } (было: { $was })
remedy_offload_optimizer = состояния оптимизатора выгружены в ОЗУ (DeepSpeed ZeRO-3 offload)
remedy_offload_all = параметры и состояния оптимизатора выгружены в ОЗУ (ZeRO-3 offload)
remedy_fused_ce = слитная / блочная кросс-энтропия (Liger, Unsloth)
remedy_micro_batch_1 = микробатч 1 с накоплением градиентов (тот же эффективный батч)
remedy_qlora = QLoRA (4-битная база) вместо этого
remedy_shorter_context = контекст вдвое короче
remedy_fp8 = веса в FP8
remedy_precompute_ref = лог-вероятности опорной модели посчитать до обучения (TRL precompute_ref_log_probs): без её копии во время обучения
remedy_int4 = веса в INT4 (GPTQ)
remedy_zero3_more_cards = ZeRO-3 на большем числе карт (несколько серверов)

# целевые показатели сервиса: поток запросов и скорость ответа (правила core.parser rate / speed, core.defaults)
field_request_rate = поток запросов
field_answer_tps = скорость ответа на пользователя
field_total_tps = токенов ответа в секунду всего
val_rate_s = { $n } { $n ->
        [one] запрос
        [few] запроса
        [other] запроса
       *[many] запросов
    } в секунду
val_rate_m = { $n } { $n ->
        [one] запрос
        [few] запроса
        [other] запроса
       *[many] запросов
    } в минуту
val_rate_h = { $n } { $n ->
        [one] запрос
        [few] запроса
        [other] запроса
       *[many] запросов
    } в час
val_rate_d = { $n } { $n ->
        [one] запрос
        [few] запроса
        [other] запроса
       *[many] запросов
    } в сутки
val_tps = { $n } ток/с
why_rate = поток запросов или скорость ответа — это про сервер
why_answer_tps = интерактивная цель MLPerf для сервинга, 40 мс на токен; укажите свою, например «30 ток/с на пользователя»
why_rate_output = длина ответа в бенчмарках LLMPerf; укажите свою, например «выход 500»
why_rate_prompt = длина промпта в бенчмарках LLMPerf; укажите свою, например «вход 2k»
why_concurrency_rate = { $rate } × { $output } = { $demand } ответов при { $speed } на каждый, по закону Литтла
why_concurrency_total = { $demand } ответов всего при { $speed } на каждый, по закону Литтла
wl_rate_total = Укажите поток запросов или общую скорость, но не то и другое: каждое задаёт, сколько токенов ответа в секунду должен выдавать сервер.
wl_rate_too_many = Для этого нужно { $n } { $n ->
        [one] ответ
        [few] ответа
        [other] ответа
       *[many] ответов
    } одновременно ({ $demand } ответов при { $speed } на каждый) — больше, чем рассчитан один сервер (не более { $max }): посчитайте одну реплику, например «{ NUMBER($max, useGrouping: 0) } { $max ->
        [one] пользователь
        [few] пользователя
        [other] пользователя
       *[many] пользователей
    }», и разделите поток между репликами.
speed_target_rate = { $rate } ({ $demand } ответов), каждый ответ не медленнее { $speed }
speed_target_total = { $demand } ответов всего, каждый ответ не медленнее { $speed }
speed_target_each = каждый ответ не медленнее { $speed }
field_ttft_s = время до первого токена
val_ms = { $n } мс
val_s = { $n } с
speed_target_ttft = первый токен не позже чем через { $ttft }
speed_target_both = { $first }; { $second }
