"""What a preference objective costs over supervised fine-tuning of the same model, method and batch.

One example of a preference objective is more than one sequence: a DPO pair is the prompt with its chosen and its
rejected answer. The trainer runs them as one batch of twice the sequences (activations and logits of both, the
training tokens of both), and an objective measured against a reference model adds forwards without gradients of
that reference: a frozen copy of the weights in GPU memory when every weight is trained, the base itself with the
adapter switched off when only an adapter is (no second copy). The facts are Hugging Face TRL's trainers, which
LLaMA-Factory, Axolotl and Unsloth build their preference training on.

Online objectives that sample answers during training (GRPO, PPO, RLOO) are not here: their memory holds a
generation engine, sampled groups and reward or value models, which the parser refuses to guess (`core.parser`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.workload import ADAPTER_METHODS, Method, Objective

_TRL = "huggingface/trl @ f2cd577 (main, 2026-07-24), "


@dataclass(frozen=True, slots=True)
class ObjectiveFacts:
    # sequences per example the trained forward and backward run on, in one batch
    graded: int
    # forwards without gradients per step (the reference's, the policy's KL sample), each over `nograd_sequences`
    # sequences per example; they run while the trained forward's activations wait for the backward
    nograd_forwards: int
    nograd_sequences: int
    # a frozen reference model: a second copy of the weights when the method trains them all (full, freeze)
    reference: bool
    source: str
    # of the forwards without gradients, the reference's: computed before training instead when its log-probs are
    # precomputed (TRL `precompute_ref_log_probs=True`: no reference in memory while training)
    reference_forwards: int = 0
    # bytes per (trained token x vocabulary entry) its loss holds at the peak, unfused; 0: the fine-tune's
    # cross-entropy (`core.estimator.LOGIT_BYTES_PLAIN`). TRL's preference losses take the model's 16-bit logits as
    # they come (no labels passed, so no fp32 upcast) through `selective_log_softmax`, row by row: the logits (2)
    # and each row's saved log-softmax (2) are held when the backward starts, the gradient replaces them as it runs
    logit_bytes: float = 0.0


# `selective_log_softmax` over the 16-bit logits: logits 2 + saved log-softmax 2 (DPO, IPO, KTO)
_LOGPS_BYTES = 4.0
# ORPO and CPOTrainer (SimPO, CPO) add an NLL term on the chosen half: `nn.CrossEntropyLoss` on the same 16-bit
# logits saves its own log-softmax of that half, +2 bytes on half the trained tokens
_LOGPS_NLL_BYTES = _LOGPS_BYTES + 1.0


def _pair(source: str, *, reference: bool) -> ObjectiveFacts:
    """Chosen and rejected as one batch; with a reference, forwarded on the pair without gradients before the
    backward (and no NLL term), without one an NLL term on the chosen half."""
    return ObjectiveFacts(graded=2, nograd_forwards=int(reference), nograd_sequences=2 if reference else 0,
                          reference=reference, source=source, reference_forwards=int(reference),
                          logit_bytes=_LOGPS_BYTES if reference else _LOGPS_NLL_BYTES)


OBJECTIVES: dict[Objective, ObjectiveFacts] = {
    Objective.SFT: ObjectiveFacts(graded=1, nograd_forwards=0, nograd_sequences=0, reference=False,
                                  source="next-token cross-entropy on each example"),
    # DPOTrainer: the collator concatenates chosen and rejected on the batch axis (`torch.cat(pad([chosen_ids,
    # rejected_ids]))`); `_compute_loss` runs the model on them, then the reference under `torch.no_grad()` on the
    # same batch before the backward; with `ref_model=None` a PEFT model is its own reference with the adapter
    # disabled, else `create_model_from_path` loads a second copy with the same init kwargs (dtype, quantisation)
    Objective.DPO: _pair(_TRL + "trl/trainer/dpo_trainer.py (collator, _compute_loss, ref_model, "
                         "_precompute_ref_logps)", reference=True),
    # IPO (Azar et al. 2023) is DPOTrainer's `loss_type="ipo"`: the same batches and reference
    Objective.IPO: _pair(_TRL + "trl/trainer/dpo_config.py (loss_type 'ipo'); arXiv:2310.12036", reference=True),
    # ORPO ("Monolithic Preference Optimization without Reference Model", Hong et al. 2024): concatenated chosen
    # and rejected, no reference (`concatenated_inputs`)
    Objective.ORPO: _pair(_TRL + "trl/experimental/orpo/orpo_trainer.py; arXiv:2403.07691", reference=False),
    # SimPO (Meng et al. 2024) is reference-free: CPOTrainer with `loss_type="simpo"`, concatenated pairs
    Objective.SIMPO: _pair(_TRL + "trl/experimental/cpo (loss_type='simpo'); arXiv:2405.14734", reference=False),
    # CPO (Xu et al. 2024): CPOTrainer, the reference-free trainer SimPO runs in
    Objective.CPO: _pair(_TRL + "trl/experimental/cpo/cpo_trainer.py; arXiv:2401.08417", reference=False),
    # KTOTrainer: unpaired answers labelled good or bad, one sequence each with gradients; without gradients the
    # policy on the mismatched KL completions (`_compute_kl_logps`), then the reference on the answers and on those
    Objective.KTO: ObjectiveFacts(graded=1, nograd_forwards=3, nograd_sequences=1, reference=True,
                                  reference_forwards=2, logit_bytes=_LOGPS_BYTES,
                                  source=_TRL + "trl/trainer/kto_trainer.py (_compute_loss, _compute_kl_logps)"),
}


def facts(objective: Objective) -> ObjectiveFacts:
    return OBJECTIVES[objective]


def training_nograd_forwards(objective: Objective, precomputed: bool) -> int:
    """Forwards without gradients per step while training: the reference's move before training when precomputed."""
    o = OBJECTIVES[objective]
    return o.nograd_forwards - o.reference_forwards if precomputed else o.nograd_forwards


def holds_reference_copy(objective: Objective, method: Method, precomputed: bool) -> bool:
    """A frozen second copy of the weights in GPU memory while training: an objective with a reference whose method
    trains the weights themselves (full, freeze; an adapter's base with the adapter off is its own reference),
    unless the reference's log-probs were computed before training."""
    return OBJECTIVES[objective].reference and method not in ADAPTER_METHODS and not precomputed
