"""The public repositories of the repository server's world (:mod:`.repository`).

Repositories are keyed by the real ``owner/name`` an upstream MCP-Universe repository_management
task names (plus a few organisations of our own, for generated tasks); everything inside them
(files, issues, dates, counts) is our own content. Numbers in files and issue counts come from
the seed; names, paths and the facts a task turns on (which vision-language model is dense,
which repository is the newest, which GUI-grounding model uses vLLM) are fixed here.

Each catalogue entry: ``owner``, ``name``, ``description``, ``language``, ``created_at``,
``stars`` (a floor), ``topics``, ``files`` (path → text template, ``{a}``..``{e}`` filled with
seeded numbers), ``labels`` (label → the chance a seeded issue carries it) and ``issues``
(``{"open": (lo, hi), "closed": (lo, hi)}``, inclusive ranges).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["CATALOGUE", "USERS", "seeded_files", "seeded_issues"]

USERS = (
    "mira-chen",
    "tobias-k",
    "ananya-r",
    "leo-brandt",
    "sofia-m",
    "kenji-w",
    "omar-h",
    "julia-p",
    "dev-nguyen",
    "ravi-s",
    "emma-l",
    "yusuf-a",
)
"""Logins of the people who open seeded issues (fictional)."""


def _readme(title: str, blurb: str, extra: str = "", install: str = "pip install -e .") -> str:
    return (
        f"# {title}\n\n{blurb}\n\n{extra}"
        + ("\n\n" if extra else "")
        + f"## Getting started\n\n```bash\n{install}\n```\n\n"
        "## Status\n\nMaintained on a best-effort basis; issues and pull requests are welcome.\n"
    )


_BUDGET = '''"""Rough trip-budget estimates used by the travel-planning agents."""

MEAL_COST_PER_DAY = {d}
LOCAL_TRANSPORT_PER_DAY = {b}
NIGHTLY_ROOM_RATE = {{"budget": {d}, "standard": {e}, "premium": {e}0}}


def estimate_budget(days: int, travellers: int, room: str = "standard") -> int:
    """Total cost of a trip: rooms per night plus meals and local transport per person and day."""
    if days <= 0 or travellers <= 0:
        raise ValueError("days and travellers must be positive")
    nights = days - 1
    rooms = (travellers + 1) // 2
    lodging = nights * rooms * NIGHTLY_ROOM_RATE[room]
    daily = days * travellers * (MEAL_COST_PER_DAY + LOCAL_TRANSPORT_PER_DAY)
    return lodging + daily


def within_budget(plan_cost: int, budget: int, slack: float = 0.05) -> bool:
    """Whether a plan's cost fits the budget, allowing a small slack."""
    return plan_cost <= budget * (1 + slack)
'''

_FUNC = '''"""Small helpers shared by the planners."""

import json


def load_records(path):
    """Read one JSON record per line."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def top_k(items, key, k={a}):
    """The k best items by key."""
    return sorted(items, key=key, reverse=True)[:k]
'''

_NOTEBOOK = """{{
 "cells": [
  {{"cell_type": "markdown", "metadata": {{}},
   "source": ["# Quick start\\n", "Load a chat model and ask it one question."]}},
  {{"cell_type": "code", "execution_count": null, "metadata": {{}}, "outputs": [],
   "source": ["from transformers import AutoModelForCausalLM, AutoTokenizer\\n",
              "name = \\"Qwen/Qwen-7B-Chat\\"\\n",
              "tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=True)\\n",
              "model = AutoModelForCausalLM.from_pretrained(\\n",
              "    name, device_map=\\"auto\\", trust_remote_code=True).eval()"]}},
  {{"cell_type": "code", "execution_count": null, "metadata": {{}}, "outputs": [],
   "source": ["question = \\"Give me three facts about tea.\\"\\n",
              "response, history = model.chat(tokenizer, question, history=None, max_new_tokens={a})\\n",
              "print(response)"]}}
 ],
 "metadata": {{"kernelspec": {{"display_name": "Python 3", "language": "python", "name": "python3"}}}},
 "nbformat": 4,
 "nbformat_minor": 5
}}
"""

_QWEN_FINETUNE = '''"""Supervised fine-tuning entry point."""

from dataclasses import dataclass


@dataclass
class TrainingArguments:
    model_max_length: int = {a}
    learning_rate: float = {b}e-6
    use_lora: bool = False


def train(args: TrainingArguments) -> None:
    print(f"fine-tuning with max length {{args.model_max_length}} and lr {{args.learning_rate}}")
'''

_STARCODER_FINETUNE = '''"""Fine-tune a code model on an instruction dataset with LoRA adapters."""

import argparse


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", default="bigcode/starcoder")
    parser.add_argument("--dataset_name", default="ArmelR/stack-exchange-instruction")
    parser.add_argument("--seq_length", type=int, default={a})
    parser.add_argument("--max_steps", type=int, default={b}00)
    parser.add_argument("--lora_r", type=int, default={c})
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    return parser.parse_args()


def main(args):
    print(f"training {{args.model_path}} for {{args.max_steps}} steps (rank {{args.lora_r}})")


if __name__ == "__main__":
    main(get_args())
'''

_STARCODER_TRAIN = '''"""Train a chat assistant on dialogue data."""

import os

WARMUP_RATIO = 0.0{a}
EPOCHS = {b}


def build_prompt(dialogue):
    """Join the turns of a dialogue with role markers."""
    return "".join(f"<|{{turn['role']}}|>{{turn['content']}}<|end|>" for turn in dialogue)


def main():
    out_dir = os.environ.get("OUTPUT_DIR", "checkpoints")
    print(f"training for {{EPOCHS}} epochs, writing to {{out_dir}}")


if __name__ == "__main__":
    main()
'''

_EXAMPLE_INSTRUCTIONS = '''"""Ask an instruction-tuned code model a few programming questions."""

import fire

from llama import Llama


def main(ckpt_dir: str, tokenizer_path: str, temperature: float = 0.{a}, top_p: float = 0.95,
         max_seq_len: int = {b}, max_batch_size: int = 4):
    generator = Llama.build(ckpt_dir=ckpt_dir, tokenizer_path=tokenizer_path,
                            max_seq_len=max_seq_len, max_batch_size=max_batch_size)
    instructions = [
        [{{"role": "user", "content": "Write a function that checks whether a string is a palindrome."}}],
        [{{"role": "user", "content": "Explain what a Python generator is in two sentences."}}],
    ]
    results = generator.chat_completion(instructions, temperature=temperature, top_p=top_p)
    for instruction, result in zip(instructions, results):
        print(instruction[0]["content"])
        print("> " + result["generation"]["content"])


if __name__ == "__main__":
    fire.Fire(main)
'''

_GENERATION = '''"""Text generation with a loaded checkpoint."""

from typing import List


class Llama:
    @staticmethod
    def build(ckpt_dir: str, tokenizer_path: str, max_seq_len: int = {a}, max_batch_size: int = {b}):
        return Llama()

    def text_completion(self, prompts: List[str], temperature: float = 0.6, top_p: float = 0.9,
                        max_gen_len: int = {c}) -> List[dict]:
        return [{{"generation": prompt}} for prompt in prompts]


def sample_top_p(probs, p):
    """Nucleus sampling: keep the smallest set of tokens whose mass exceeds p."""
    ordered = sorted(enumerate(probs), key=lambda x: -x[1])
    kept, mass = [], 0.0
    for token, prob in ordered:
        kept.append(token)
        mass += prob
        if mass > p:
            break
    return kept
'''

_SETUP = """from setuptools import find_packages, setup

setup(
    name="{pkg}",
    version="0.{a}.{b}",
    description="{desc}",
    packages=find_packages("{src}"),
    package_dir={{"": "{src}"}},
    python_requires=">=3.{c}",
    install_requires={deps},
)
"""

_ARIAUI = '''"""Aria-UI grounding model served with vLLM."""

from vllm import LLM, SamplingParams


class AriaUIModel:
    def __init__(self, model_path: str = "Aria-UI/Aria-UI-base"):
        self.llm = LLM(model=model_path, tokenizer_mode="slow", dtype="bfloat16", trust_remote_code=True)
        self.params = SamplingParams(max_tokens={a}, temperature=0.0)

    def ground_only_positive(self, instruction: str, image) -> tuple:
        prompt = f"Relative (0-1000) point coordinates of the element: {{instruction}}"
        out = self.llm.generate({{"prompt": prompt, "multi_modal_data": {{"image": image}}}}, self.params)
        x, y = out[0].outputs[0].text.strip("()[] ").split(",")[:2]
        return int(x) / 1000, int(y) / 1000
'''

_QWEN_VL_MODEL = '''"""Qwen2.5-VL grounding model loaded with transformers."""

from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration


class Qwen25VLModel:
    def __init__(self, model_path: str = "Qwen/Qwen2.5-VL-7B-Instruct"):
        self.model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_path, device_map="auto")
        self.processor = AutoProcessor.from_pretrained(model_path)
        self.max_new_tokens = {a}
'''

_EVAL_SSP = '''"""Score a grounding model on the ScreenSpot-Pro split."""

import argparse
import json


def point_in_box(point, box):
    x, y = point
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_type", required=True)
    parser.add_argument("--screenspot_test", default="annotations")
    parser.add_argument("--log_path", default="results/{a}.json")
    args = parser.parse_args()
    print(json.dumps({{"model": args.model_type}}))


if __name__ == "__main__":
    main()
'''

_ARIA_UI_VLLM = '''"""Run Aria-UI through vLLM for one screenshot and one instruction."""

from PIL import Image
from vllm import LLM, SamplingParams


def main(image_path: str, instruction: str, model_path: str = "Aria-UI/Aria-UI-base"):
    llm = LLM(model=model_path, tokenizer_mode="slow", dtype="bfloat16", trust_remote_code=True,
              max_model_len={a}, limit_mm_per_prompt={{"image": 1}})
    image = Image.open(image_path).convert("RGB")
    prompt = f"<|img|>Relative (0-1000) point coordinates of the element: {{instruction}}"
    outputs = llm.generate({{"prompt": prompt, "multi_modal_data": {{"image": image}}}},
                           SamplingParams(max_tokens={b}, temperature=0.0))
    print(outputs[0].outputs[0].text)


if __name__ == "__main__":
    import sys

    main(sys.argv[1], sys.argv[2])
'''

_ARIA_UI_HF = '''"""Run Aria-UI with transformers."""

from transformers import AutoModelForCausalLM, AutoProcessor

MODEL = "Aria-UI/Aria-UI-base"
MAX_NEW_TOKENS = {a}


def load():
    model = AutoModelForCausalLM.from_pretrained(MODEL, device_map="auto", trust_remote_code=True)
    return model, AutoProcessor.from_pretrained(MODEL, trust_remote_code=True)
'''

_OSWORLD_RUN = '''"""Run an agent on the desktop tasks."""

import argparse

MAX_STEPS = {a}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", default="vmware")
    parser.add_argument("--max_steps", type=int, default=MAX_STEPS)
    print(parser.parse_args())


if __name__ == "__main__":
    main()
'''

_GENERIC_PY = '''"""{desc}"""

__version__ = "0.{a}.{b}"

DEFAULTS = {{"batch_size": {c}, "timeout_s": {d}}}


def settings(**overrides):
    """The defaults with overrides applied."""
    return {{**DEFAULTS, **overrides}}
'''


def _vl_readme(title: str, blurb: str, arch: str) -> str:
    return _readme(title, blurb, f"## Architecture\n\n{arch}", "pip install -r requirements.txt")


_BUG = {"bug": 1}
CATALOGUE: list[dict[str, Any]] = [
    {
        "owner": "OSU-NLP-Group",
        "name": "TravelPlanner",
        "language": "Python",
        "created_at": "2024-01-29T16:02:11Z",
        "stars": 900,
        "topics": ["agents", "planning", "benchmark"],
        "description": "A benchmark of real-world travel-planning tasks for language agents.",
        "files": {
            "README.md": _readme(
                "TravelPlanner",
                "A benchmark of real-world travel-planning tasks for language agents: "
                "agents gather flights, restaurants and attractions with tools and must respect the "
                "traveller's budget and constraints.",
            ),
            "utils/budget_estimation.py": _BUDGET,
            "utils/func.py": _FUNC,
            "requirements.txt": "pandas>=2.0\nrequests>=2.31\ntiktoken>=0.5\n",
        },
        "labels": {"bug": 0.3, "question": 0.4},
        "issues": {"open": (3, 9), "closed": (4, 10)},
    },
    {
        "owner": "QwenLM",
        "name": "Qwen",
        "language": "Python",
        "created_at": "2023-08-03T02:15:40Z",
        "stars": 15000,
        "topics": ["llm", "chat"],
        "description": "Chat and base language models of the Qwen series.",
        "files": {
            "README.md": _readme(
                "Qwen",
                "Chat and base language models of the Qwen series, with recipes for "
                "inference, quantization and fine-tuning.",
            ),
            "recipes/quickstart/qwen.ipynb": _NOTEBOOK,
            "finetune.py": _QWEN_FINETUNE,
            "requirements.txt": "transformers>=4.32\naccelerate\ntiktoken\neinops\n",
        },
        "labels": {"bug": 0.25, "question": 0.35, "enhancement": 0.15},
        "issues": {"open": (5, 14), "closed": (6, 14)},
    },
    {
        "owner": "QwenLM",
        "name": "Qwen-Agent",
        "language": "Python",
        "created_at": "2023-09-21T08:30:00Z",
        "stars": 6000,
        "topics": ["agents", "llm", "tools"],
        "description": "An agent framework with tool use, planning and memory on Qwen models.",
        "files": {
            "README.md": _readme(
                "Qwen-Agent",
                "An agent framework with tool use, planning and memory, built on Qwen "
                "models, with a browser assistant and a code interpreter as examples.",
            ),
            "setup.py": _SETUP,
        },
        "labels": {"Work in Progress": 0.35, "bug": 0.25, "enhancement": 0.2},
        "issues": {"open": (4, 12), "closed": (8, 18)},
    },
    {
        "owner": "QwenLM",
        "name": "Qwen2.5-VL",
        "language": "Jupyter Notebook",
        "created_at": "2024-08-19T09:12:00Z",
        "stars": 9000,
        "topics": ["vision-language", "multimodal"],
        "description": "Vision-language models of the Qwen2.5 series.",
        "files": {
            "README.md": _vl_readme(
                "Qwen2.5-VL",
                "Vision-language models of the Qwen2.5 series for document "
                "parsing, grounding and video understanding.",
                "Every Qwen2.5-VL model is a dense decoder-only transformer (3B, 7B, 32B and 72B "
                "parameters) behind a window-attention vision encoder; no model in the series "
                "uses a mixture of experts.",
            ),
            "web_demo_mm.py": _GENERIC_PY,
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (4, 12), "closed": (3, 9)},
    },
    {
        "owner": "bigcode-project",
        "name": "starcoder",
        "language": "Python",
        "created_at": "2023-04-24T12:40:00Z",
        "stars": 7000,
        "topics": ["code", "llm"],
        "description": "Home of StarCoder: fine-tuning and inference code.",
        "files": {
            "README.md": _readme(
                "StarCoder", "Fine-tuning and inference code for the StarCoder code models."
            ),
            "finetune/finetune.py": _STARCODER_FINETUNE,
            "chat/train.py": _STARCODER_TRAIN,
            "requirements.txt": "transformers\npeft\ndatasets\naccelerate\n",
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (4, 12), "closed": (3, 9)},
    },
    {
        "owner": "meta-llama",
        "name": "codellama",
        "language": "Python",
        "created_at": "2023-08-24T13:00:00Z",
        "stars": 16000,
        "topics": ["code", "llm"],
        "description": "Inference code for Code Llama models.",
        "files": {
            "README.md": _readme(
                "Code Llama",
                "Inference code for Code Llama models: completion, infilling and instruction following.",
            ),
            "example_instructions.py": _EXAMPLE_INSTRUCTIONS,
            "llama/generation.py": _GENERATION,
            "setup.py": _SETUP,
        },
        "labels": {"bug": 0.3, "question": 0.35},
        "issues": {"open": (4, 12), "closed": (3, 9)},
    },
    {
        "owner": "meta-llama",
        "name": "llama",
        "language": "Python",
        "created_at": "2023-02-14T18:05:00Z",
        "stars": 56000,
        "topics": ["llm"],
        "description": "Inference code for Llama models.",
        "files": {
            "README.md": _readme(
                "Llama", "Inference code for Llama models, with example scripts for text and chat completion."
            ),
            "setup.py": _SETUP,
            "llama/__init__.py": "from .generation import Llama\n",
        },
        "labels": {"bug": 0.25, "question": 0.4},
        "issues": {"open": (6, 16), "closed": (5, 12)},
    },
    {
        "owner": "meta-llama",
        "name": "llama-recipes",
        "language": "Jupyter Notebook",
        "created_at": "2023-07-17T20:10:00Z",
        "stars": 12000,
        "topics": ["llm", "fine-tuning"],
        "description": "Scripts for fine-tuning and serving Llama models.",
        "files": {"README.md": _readme("Llama Recipes", "Scripts for fine-tuning and serving Llama models.")},
        "labels": {"bug": 0.3, "enhancement": 0.2},
        "issues": {"open": (3, 10), "closed": (3, 8)},
    },
    {
        "owner": "huggingface",
        "name": "accelerate",
        "language": "Python",
        "created_at": "2020-10-30T11:00:00Z",
        "stars": 7000,
        "topics": ["pytorch", "distributed"],
        "description": "Run PyTorch training on any device setup.",
        "files": {
            "README.md": _readme(
                "Accelerate",
                "Run the same PyTorch training script on one GPU, many GPUs, TPUs "
                "or mixed precision with a few added lines.",
            ),
            "setup.py": _SETUP,
            "src/accelerate/__init__.py": _GENERIC_PY,
        },
        "labels": {"bug": 0.3, "enhancement": 0.2},
        "issues": {"open": (5, 14), "closed": (4, 10)},
    },
    {
        "owner": "huggingface",
        "name": "peft",
        "language": "Python",
        "created_at": "2022-11-25T10:00:00Z",
        "stars": 15000,
        "topics": ["fine-tuning", "lora"],
        "description": "Parameter-efficient fine-tuning methods.",
        "files": {
            "README.md": _readme(
                "PEFT", "Parameter-efficient fine-tuning methods such as LoRA and prefix tuning."
            ),
            "setup.py": _SETUP,
        },
        "labels": {"bug": 0.3, "enhancement": 0.25},
        "issues": {"open": (4, 12), "closed": (4, 10)},
    },
    *[
        {
            "owner": "google",
            "name": f"generative-ai-{lang}",
            "language": language,
            "created_at": created,
            "stars": stars,
            "topics": ["gemini", "sdk"],
            "description": f"The Gemini API SDK for {pretty}.",
            "files": {
                "README.md": _readme(
                    f"Generative AI SDK for {pretty}",
                    f"Call the Gemini API from {pretty} "
                    "applications: text, chat, embeddings and multimodal prompts.",
                    "",
                    install,
                )
            },
            "labels": {"type:bug": 0.35, "type:feature request": 0.25, "status:triaged": 0.3},
            "issues": {"open": (2, 12), "closed": (2, 8)},
        }
        for lang, pretty, language, created, stars, install in (
            ("python", "Python", "Python", "2023-03-14T17:00:00Z", 1500, "pip install google-generativeai"),
            (
                "js",
                "JavaScript",
                "TypeScript",
                "2023-11-30T18:00:00Z",
                700,
                "npm install @google/generative-ai",
            ),
            ("go", "Go", "Go", "2023-12-05T16:00:00Z", 600, "go get github.com/google/generative-ai-go"),
            ("swift", "Swift", "Swift", "2023-12-08T15:00:00Z", 500, "swift package add generative-ai-swift"),
            (
                "docs",
                "documentation",
                "Jupyter Notebook",
                "2023-03-10T19:00:00Z",
                1900,
                "pip install -r requirements.txt",
            ),
        )
    ],
    {
        "owner": "google",
        "name": "gemma-cookbook",
        "language": "Jupyter Notebook",
        "created_at": "2024-02-20T10:00:00Z",
        "stars": 2500,
        "topics": ["gemma"],
        "description": "Guides and examples for the Gemma open models.",
        "files": {"README.md": _readme("Gemma Cookbook", "Guides and examples for the Gemma open models.")},
        "labels": {"bug": 0.3},
        "issues": {"open": (2, 6), "closed": (1, 5)},
    },
    {
        "owner": "microsoft",
        "name": "AirSim",
        "language": "C++",
        "created_at": "2017-02-14T22:00:00Z",
        "stars": 16000,
        "topics": ["simulation", "drones"],
        "description": "A simulator for drones and cars built on a game engine.",
        "files": {
            "README.md": _readme(
                "AirSim", "A simulator for drones and cars, for research on autonomous vehicles."
            )
        },
        "labels": {"bug": 0.3, "enhancement": 0.25, "question": 0.2},
        "issues": {"open": (6, 16), "closed": (4, 10)},
    },
    {
        "owner": "microsoft",
        "name": "AirSim-Drone-Racing-Lab",
        "language": "Python",
        "created_at": "2019-07-09T17:00:00Z",
        "stars": 300,
        "topics": ["simulation", "racing"],
        "description": "A framework for drone-racing research on the simulator.",
        "files": {
            "README.md": _readme(
                "AirSim Drone Racing Lab",
                "A framework for drone-racing research: tracks, baselines and evaluation.",
            )
        },
        "labels": {"bug": 0.3, "enhancement": 0.25, "question": 0.2},
        "issues": {"open": (3, 10), "closed": (2, 8)},
    },
    {
        "owner": "microsoft",
        "name": "Air",
        "language": "Python",
        "created_at": "2024-05-21T08:00:00Z",
        "stars": 150,
        "topics": ["sensors", "time-series"],
        "description": "Tools for cleaning and forecasting air-quality sensor data.",
        "files": {
            "README.md": _readme("Air", "Tools for cleaning and forecasting air-quality sensor data."),
            "air/__init__.py": _GENERIC_PY,
        },
        "labels": {"bug": 0.3, "enhancement": 0.25, "question": 0.2},
        "issues": {"open": (3, 10), "closed": (1, 6)},
    },
    {
        "owner": "microsoft",
        "name": "markitdown",
        "language": "Python",
        "created_at": "2024-11-13T19:00:00Z",
        "stars": 40000,
        "topics": ["markdown", "conversion"],
        "description": "Convert office documents to Markdown.",
        "files": {
            "README.md": _readme(
                "MarkItDown", "Convert office documents and PDFs to Markdown for language models."
            )
        },
        "labels": {"bug": 0.3, "enhancement": 0.25},
        "issues": {"open": (4, 12), "closed": (3, 8)},
    },
    {
        "owner": "likaixin2000",
        "name": "ScreenSpot-Pro-GUI-Grounding",
        "language": "Python",
        "created_at": "2025-01-03T06:00:00Z",
        "stars": 200,
        "topics": ["gui-agents", "grounding", "benchmark"],
        "description": "Evaluation code for GUI grounding on high-resolution professional screenshots.",
        "files": {
            "README.md": _readme(
                "ScreenSpot-Pro",
                "Evaluation code for GUI grounding on high-resolution "
                "professional screenshots; one file per model under models/.",
            ),
            "models/ariaui.py": _ARIAUI,
            "models/qwen2_5_vl.py": _QWEN_VL_MODEL,
            "eval_screenspot_pro.py": _EVAL_SSP,
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (1, 6), "closed": (1, 5)},
    },
    {
        "owner": "xlang-ai",
        "name": "OSWorld",
        "language": "Python",
        "created_at": "2024-01-24T12:00:00Z",
        "stars": 1800,
        "topics": ["agents", "benchmark", "desktop"],
        "description": "Benchmark of open-ended tasks on real desktop computers.",
        "files": {
            "README.md": _readme(
                "OSWorld", "A benchmark of open-ended tasks on real desktop computers for multimodal agents."
            ),
            "run.py": _OSWORLD_RUN,
            "desktop_env/__init__.py": _GENERIC_PY,
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (3, 10), "closed": (2, 8)},
    },
    {
        "owner": "AriaUI",
        "name": "Aria-UI",
        "language": "Python",
        "created_at": "2024-12-17T04:00:00Z",
        "stars": 250,
        "topics": ["gui-agents", "grounding"],
        "description": "Visual grounding for GUI instructions.",
        "files": {
            "README.md": _readme(
                "Aria-UI",
                "Visual grounding for GUI instructions: give a screenshot and an "
                "instruction, get the element's coordinates.",
            ),
            "examples/aria_ui_vllm.py": _ARIA_UI_VLLM,
            "examples/aria_ui_hf.py": _ARIA_UI_HF,
        },
        "labels": {"bug": 0.3},
        "issues": {"open": (1, 5), "closed": (1, 4)},
    },
    {
        "owner": "deepseek-ai",
        "name": "DeepSeek-VL2",
        "language": "Python",
        "created_at": "2024-12-13T03:00:00Z",
        "stars": 4500,
        "topics": ["vision-language", "moe"],
        "description": "Mixture-of-experts vision-language models.",
        "files": {
            "README.md": _vl_readme(
                "DeepSeek-VL2",
                "Vision-language models for visual question answering, OCR and document understanding.",
                "DeepSeek-VL2 is a Mixture-of-Experts (MoE) model: each token is routed to a few "
                "experts, so the activated parameters are a fraction of the total.",
            )
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (3, 10), "closed": (2, 8)},
    },
    {
        "owner": "rhymes-ai",
        "name": "Aria",
        "language": "Jupyter Notebook",
        "created_at": "2024-09-26T09:00:00Z",
        "stars": 1000,
        "topics": ["multimodal", "moe"],
        "description": "An open multimodal native mixture-of-experts model.",
        "files": {
            "README.md": _vl_readme(
                "Aria",
                "An open multimodal model for text, images and video.",
                "Aria is a multimodal native Mixture-of-Experts (MoE) decoder with fine-grained experts.",
            )
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (2, 8), "closed": (2, 6)},
    },
    {
        "owner": "MoonshotAI",
        "name": "Kimi-VL",
        "language": "Python",
        "created_at": "2025-04-09T11:00:00Z",
        "stars": 1000,
        "topics": ["vision-language", "moe"],
        "description": "Efficient mixture-of-experts vision-language models.",
        "files": {
            "README.md": _vl_readme(
                "Kimi-VL",
                "Vision-language models for long-context, agentic and reasoning tasks.",
                "Kimi-VL uses a Mixture-of-Experts (MoE) language decoder that activates a small "
                "share of its parameters per token.",
            )
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (2, 8), "closed": (1, 5)},
    },
    {
        "owner": "salesforce",
        "name": "LAVIS",
        "language": "Jupyter Notebook",
        "created_at": "2022-08-24T04:00:00Z",
        "stars": 10000,
        "topics": ["vision-language", "library"],
        "description": "A library for language-vision research.",
        "files": {
            "README.md": _readme(
                "LAVIS",
                "A one-stop library for language-vision research: datasets, models and "
                "evaluation behind one interface.",
            )
        },
        "labels": {"bug": 0.3, "question": 0.3, "New Features": 0.1},
        "issues": {"open": (18, 40), "closed": (5, 12)},
    },
    {
        "owner": "salesforce",
        "name": "BLIP",
        "language": "Jupyter Notebook",
        "created_at": "2022-01-25T06:00:00Z",
        "stars": 5000,
        "topics": ["vision-language"],
        "description": "Bootstrapped language-image pre-training.",
        "files": {
            "README.md": _readme(
                "BLIP", "Bootstrapped language-image pre-training for unified understanding and generation."
            )
        },
        "labels": {"New Features": 0.3, "bug": 0.2, "question": 0.3},
        "issues": {"open": (6, 17), "closed": (4, 10)},
    },
    {
        "owner": "salesforce",
        "name": "ALBEF",
        "language": "Python",
        "created_at": "2021-07-13T05:00:00Z",
        "stars": 1500,
        "topics": ["vision-language"],
        "description": "Align before fuse: vision-language representation learning.",
        "files": {
            "README.md": _readme("ALBEF", "Align before fuse: vision-language representation learning.")
        },
        "labels": {"bug": 0.3, "question": 0.3},
        "issues": {"open": (2, 8), "closed": (2, 6)},
    },
    {
        "owner": "modelcontextprotocol",
        "name": "modelcontextprotocol",
        "language": "TypeScript",
        "created_at": "2024-09-24T10:00:00Z",
        "stars": 4000,
        "topics": ["mcp", "specification"],
        "description": "Specification and documentation of the Model Context Protocol.",
        "files": {
            "README.md": _readme(
                "Model Context Protocol",
                "The specification and documentation of the Model "
                "Context Protocol, an open protocol connecting language-model applications to "
                "tools and data.",
                "",
                "npm install",
            )
        },
        "labels": {"bug": 0.2, "enhancement": 0.3},
        "issues": {"open": (3, 9), "closed": (2, 6)},
    },
    {
        "owner": "github",
        "name": "github-mcp-server",
        "language": "Go",
        "created_at": "2025-03-04T16:00:00Z",
        "stars": 15000,
        "topics": ["mcp", "github"],
        "description": "GitHub's official MCP server.",
        "files": {
            "README.md": _readme(
                "GitHub MCP Server",
                "GitHub's official Model Context Protocol server: "
                "repositories, issues and pull requests as tools.",
                "",
                "docker run -i --rm ghcr.io/github/github-mcp-server",
            )
        },
        "labels": {"bug": 0.3, "enhancement": 0.3},
        "issues": {"open": (4, 12), "closed": (3, 8)},
    },
    *[
        {
            "owner": "orbit-labs",
            "name": name,
            "language": "Rust",
            "created_at": created,
            "stars": stars,
            "topics": ["orbit"],
            "description": desc,
            "files": {
                "README.md": _readme(name, desc, "", "cargo build --release"),
                "src/lib.rs": "pub mod config;\n",
            },
            "labels": {"bug": 0.3, "needs-triage": 0.3, "enhancement": 0.2},
            "issues": {"open": (2, 11), "closed": (1, 7)},
        }
        for name, created, stars, desc in (
            ("orbit-core", "2023-05-02T10:00:00Z", 800, "The scheduling core of the Orbit job runner."),
            ("orbit-cli", "2023-06-14T10:00:00Z", 300, "Command-line client of the Orbit job runner."),
            ("orbit-docs", "2023-07-01T10:00:00Z", 90, "Documentation site of the Orbit job runner."),
        )
    ],
    *[
        {
            "owner": "lumen-ai",
            "name": name,
            "language": "Python",
            "created_at": created,
            "stars": stars,
            "topics": ["lumen"],
            "description": desc,
            "files": {"README.md": _readme(name, desc), "lumen/__init__.py": _GENERIC_PY, "setup.py": _SETUP},
            "labels": {"bug": 0.3, "good first issue": 0.2, "enhancement": 0.25},
            "issues": {"open": (2, 11), "closed": (1, 7)},
        }
        for name, created, stars, desc in (
            ("lumen-vision", "2024-02-11T10:00:00Z", 400, "Image classification and detection pipelines."),
            (
                "lumen-speech",
                "2024-03-19T10:00:00Z",
                250,
                "Speech recognition pipelines with streaming decoders.",
            ),
        )
    ],
    {
        "owner": "egi-agent",
        "name": "scratchpad",
        "language": "Markdown",
        "created_at": "2024-03-01T09:00:00Z",
        "stars": 0,
        "topics": [],
        "description": "Personal notes.",
        "files": {"README.md": "# scratchpad\n\nPersonal notes.\n", "notes.md": "- try the new planner\n"},
        "labels": {},
        "issues": {"open": (0, 0), "closed": (0, 0)},
    },
]
"""The public repositories (see the module docstring)."""

_DEPS = ('["torch>=2.0"]', '["numpy", "requests"]', '["fire", "sentencepiece"]', '["pyyaml"]')

_TITLES = {
    "bug": [
        "{area} crashes when {cond}",
        "Wrong output from {area} with {cond}",
        "{area} raises an error on {cond}",
    ],
    "type:bug": [
        "{area} returns an empty response for {cond}",
        "Timeout in {area} when {cond}",
        "{area} ignores the setting for {cond}",
    ],
    "question": ["How do I configure {area} for {cond}?", "Is {area} supposed to work with {cond}?"],
    "enhancement": ["Support {cond} in {area}", "Allow {area} to handle {cond}"],
    "type:feature request": ["Feature request: {cond} for {area}", "Add {cond} support to {area}"],
    "New Features": ["New feature: {area} for {cond}", "Request: {cond} in {area}"],
    "Work in Progress": ["[WIP] {area} for {cond}", "Draft: rework {area} for {cond}"],
    "": [
        "{area} documentation is unclear about {cond}",
        "Question about {area} and {cond}",
        "Unexpected behaviour of {area} with {cond}",
    ],
}
_AREAS = [
    "the tokenizer",
    "the loader",
    "batch inference",
    "the CLI",
    "streaming",
    "the config parser",
    "the evaluation script",
    "checkpoint saving",
    "the web demo",
    "the exporter",
]
_CONDS = [
    "long inputs",
    "empty files",
    "multiple GPUs",
    "Windows paths",
    "unicode text",
    "large images",
    "half precision",
    "a custom dataset",
    "a proxy",
    "parallel requests",
]
_EPOCH = datetime(2025, 6, 1, tzinfo=UTC)


def seeded_files(spec: dict[str, Any], r: random.Random) -> dict[str, str]:
    """The repository's files with its seeded numbers filled in."""
    out = {}
    for path, text in spec["files"].items():
        nums = {
            "a": r.randint(2, 9),
            "b": r.randint(10, 40),
            "c": r.randint(8, 12),
            "d": r.randint(30, 90),
            "e": r.randint(150, 400),
        }
        if text is _SETUP:
            fields = {
                "pkg": spec["name"].lower(),
                "desc": spec["description"],
                "src": "src" if "accelerate" in spec["name"] else ".",
                "deps": _DEPS[r.randrange(len(_DEPS))],
            }
            out[path] = text.format(**nums, **fields)
        elif text is _GENERIC_PY:
            out[path] = text.format(**nums, desc=spec["description"])
        elif "{a}" in text or "{{" in text:
            out[path] = text.format(**nums)
        else:
            out[path] = text
    return out


def seeded_issues(spec: dict[str, Any], r: random.Random) -> list[dict[str, Any]]:
    """The repository's issues (numbers from 1, oldest first), each with its labels and state."""
    created = datetime.strptime(spec["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    span = max(1, int((_EPOCH - created).total_seconds() // 3600))
    states = ["open"] * r.randint(*spec["issues"]["open"]) + ["closed"] * r.randint(*spec["issues"]["closed"])
    r.shuffle(states)
    hours = sorted(r.randrange(span) for _ in states)
    issues = []
    for n, (state, h) in enumerate(zip(states, hours, strict=True), start=1):
        labels = [lb for lb, p in spec["labels"].items() if r.random() < p]
        kind = labels[0] if labels and labels[0] in _TITLES else ("bug" if labels else "")
        title = r.choice(_TITLES[kind]).format(area=r.choice(_AREAS), cond=r.choice(_CONDS))
        title = title[0].upper() + title[1:]
        opened = created + timedelta(hours=h)
        closed = opened + timedelta(hours=r.randint(2, 600)) if state == "closed" else None
        closed = min(closed, _EPOCH) if closed else None
        comments = [
            {
                "id": 0,
                "body": r.choice(
                    [
                        "Thanks for the report.",
                        "I can reproduce this.",
                        "Could you share the full log?",
                        "Fixed on main.",
                    ]
                ),
                "user": r.choice(USERS),
                "created_at": _iso(opened + timedelta(hours=1)),
            }
            for _ in range(int(r.random() < 0.3))
        ]
        issues.append(
            {
                "number": n,
                "title": title,
                "body": f"Seen on version 0.{r.randint(1, 9)}.",
                "state": state,
                "state_reason": "completed" if state == "closed" else None,
                "labels": labels,
                "user": r.choice(USERS),
                "created_at": _iso(opened),
                "updated_at": _iso(closed or opened),
                "closed_at": _iso(closed) if closed else None,
                "comments": comments,
            }
        )
    return issues


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
