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

from core.workload import Objective

_TRL = "huggingface/trl main (2026-07), "


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


OBJECTIVES: dict[Objective, ObjectiveFacts] = {
    Objective.SFT: ObjectiveFacts(1, 0, 0, False, "next-token cross-entropy on each example"),
    # DPOTrainer: the collator concatenates chosen and rejected on the batch axis (`torch.cat(pad([chosen_ids,
    # rejected_ids]))`); `_compute_loss` runs the model on them, then the reference under `torch.no_grad()` on the
    # same batch before the backward; with `ref_model=None` a PEFT model is its own reference with the adapter
    # disabled, else `create_model_from_path` loads a second copy with the same init kwargs (dtype, quantisation)
    Objective.DPO: ObjectiveFacts(2, 1, 2, True, _TRL + "trl/trainer/dpo_trainer.py (collator, _compute_loss, "
                                                       "ref_model, _precompute_ref_logps)", reference_forwards=1),
    # IPO (Azar et al. 2023) is DPOTrainer's `loss_type="ipo"`: the same batches and reference
    Objective.IPO: ObjectiveFacts(2, 1, 2, True, _TRL + "trl/trainer/dpo_config.py (loss_type 'ipo'); "
                                                       "arXiv:2310.12036", reference_forwards=1),
    # ORPO ("Monolithic Preference Optimization without Reference Model", Hong et al. 2024): concatenated chosen
    # and rejected, no reference (trl/experimental/orpo/orpo_trainer.py, `concatenated_inputs`)
    Objective.ORPO: ObjectiveFacts(2, 0, 0, False, _TRL + "trl/experimental/orpo/orpo_trainer.py; arXiv:2403.07691"),
    # SimPO (Meng et al. 2024) is reference-free: CPOTrainer with `loss_type="simpo"`, concatenated pairs
    Objective.SIMPO: ObjectiveFacts(2, 0, 0, False, _TRL + "trl/experimental/cpo (loss_type='simpo'); "
                                                         "arXiv:2405.14734"),
    # CPO (Xu et al. 2024): CPOTrainer, the reference-free trainer SimPO runs in
    Objective.CPO: ObjectiveFacts(2, 0, 0, False, _TRL + "trl/experimental/cpo/cpo_trainer.py; arXiv:2401.08417"),
    # KTOTrainer: unpaired answers labelled good or bad, one sequence each with gradients; without gradients the
    # policy on the mismatched KL completions (`_compute_kl_logps`), the reference on the answers and on those
    Objective.KTO: ObjectiveFacts(1, 3, 1, True, _TRL + "trl/trainer/kto_trainer.py (_compute_loss, "
                                                       "_compute_kl_logps)", reference_forwards=2),
}


def facts(objective: Objective) -> ObjectiveFacts:
    return OBJECTIVES[objective]


def training_nograd_forwards(objective: Objective, precomputed: bool) -> int:
    """Forwards without gradients per step while training: the reference's move before training when precomputed."""
    o = OBJECTIVES[objective]
    return o.nograd_forwards - o.reference_forwards if precomputed else o.nograd_forwards
