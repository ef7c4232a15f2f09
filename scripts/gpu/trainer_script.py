"""A Transformers Trainer script, as a user would record it whole from the
command line: the steps loop inside the installed library (Trainer.train()),
none in the script. A GPT-2 from its config (random weights) on a synthetic
corpus; `--optim` picks Trainer's optimizer (adamw_torch: foreach AdamW on a
GPU, adamw_torch_fused: the fused kernel). Prints Trainer's own runtime per
step (the ground truth's time).

    python trainer_script.py OUT_DIR --optim adamw_torch_fused --steps 300 [--tiny]
"""
import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

p = argparse.ArgumentParser()
p.add_argument("output_dir")
p.add_argument("--optim", default="adamw_torch")
p.add_argument("--steps", type=int, default=300)
p.add_argument("--tiny", action="store_true", help="a 2-layer model on the CPU (to try the script)")
a = p.parse_args()

cpu = a.tiny or not torch.cuda.is_available()
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=256, n_positions=64) if a.tiny else \
    GPT2Config(n_layer=6, n_embd=768, n_head=12)
model = GPT2LMHeadModel(config)
seq, batch = (32, 4) if a.tiny else (256, 8)
data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, config.vocab_size, (64, seq))]
args = TrainingArguments(output_dir=a.output_dir, max_steps=a.steps, per_device_train_batch_size=batch, optim=a.optim,
                         bf16=not cpu, logging_steps=10**6, save_strategy="no", report_to=[], use_cpu=cpu,
                         disable_tqdm=True, dataloader_pin_memory=not cpu)
out = Trainer(model=model, args=args, train_dataset=data).train()
print(f"{a.steps} steps ({a.optim}) in {out.metrics['train_runtime']:.3f} s: "
      f"{out.metrics['train_runtime'] / a.steps * 1e3:.2f} ms each; loss {out.training_loss:.4f}")
