"""The TRL adapter, against the real ``trl`` (GRPOTrainer with ``environment_factory``) on CPU.

The model is a tiny randomly initialised Qwen2 built from a config, its tokenizer built here
from bytes (no download), with TRL's own Qwen2.5 chat template so TRL parses tool calls. One
training step runs; its logged rewards are the world's checks, which the test recomputes from
the environments TRL used. The environment's tools are checked against the world's own
dispatcher and schemas, and its rewards on a solved and an unsolved episode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from adapter_support import PACKAGE, framework

from worldspec.services.loading import load_world
from worldspec.services.prompts import agent_system_prompt

trl = framework("trl", "trl")
adapter = framework("trl", "worldspec.adapters.trl")
TASK = "reply_to_priya"
World: Any = load_world(PACKAGE)


def _solved(env: Any) -> None:
    for name, arguments in World.TASKS[TASK].solution:
        getattr(env, name)(**dict(arguments))


def test_the_tools_are_the_worlds_with_their_docs_and_schemas() -> None:
    from transformers.utils import get_json_schema

    environment = adapter.environment_factory(World)
    expected = {d["function"]["name"]: d["function"] for d in World(task=TASK).tools("chat")}
    public = sorted(n for n in vars(environment) if not n.startswith("_") and n != "WORLD")
    assert public == sorted(expected)
    for name, definition in expected.items():
        schema = get_json_schema(getattr(environment, name))["function"]
        assert schema["name"] == name
        assert schema["description"].split()[:4] == definition["description"].split()[:4]
        assert set(schema["parameters"].get("properties", {})) == \
            set(definition["parameters"]["properties"])
        assert set(schema["parameters"].get("required", [])) == \
            set(definition["parameters"]["required"])
    env = environment()
    assert env.reset(task=TASK, prompt=[], split="train") is None
    local = World(task=TASK)
    login = {"phone": "+14155550101", "password": "sunflower42"}
    assert json.loads(env.login(**login)) == local.call("login", login)
    refused = env.login(phone="+10000000000", password="x")
    assert local.failed(json.loads(refused))  # the world's failure message, as text


def test_rewards_read_the_tasks_checks_both_ways() -> None:
    environment = adapter.environment_factory(World)
    solved, untouched = environment(), environment()
    solved.reset(task=TASK)
    untouched.reset(task=TASK)
    _solved(solved)
    rewards = {f.__name__: f for f in adapter.reward_functions(World)}
    said = [[{"role": "assistant", "content": "Done."}]] * 2
    assert rewards["task_reward"](completions=said, environments=[solved, untouched]) == \
        [1.0, 0.0]
    checks = [c["name"] for c in World(task=TASK).score(replies=[]).to_json()["checks"]]
    for check in checks:
        assert rewards[f"check_{check}"](completions=said,
                                         environments=[solved, untouched])[0] == 1.0
    foreign = next(n for n in rewards if n.startswith("check_") and n[6:] not in checks)
    assert rewards[foreign](completions=said[:1], environments=[solved]) == [None]
    with pytest.raises(ValueError, match="environment_factory"):
        rewards["task_reward"](completions=said, environments=None)


def test_the_dataset_is_the_tasks_with_the_agents_system_prompt() -> None:
    dataset = adapter.task_dataset(World)
    assert dataset["task"] == list(World.TASKS)
    row = dataset[0]
    assert row["prompt"][0] == {"role": "system", "content": agent_system_prompt(
        World, row["task"], conversational=False)}
    assert row["prompt"][1] == {"role": "user",
                                "content": World.TASKS[row["task"]].instruction}
    with pytest.raises(ValueError, match="no tasks in split"):
        adapter.task_dataset(World, split="nosuch")


def _tiny_model_and_tokenizer() -> tuple[Any, Any]:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {symbol: index for index, symbol in enumerate(sorted(alphabet))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = byte_level
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, padding_side="left")
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    tokenizer.add_special_tokens({"additional_special_tokens": specials})
    tokenizer.eos_token, tokenizer.pad_token = "<|im_end|>", "<|endoftext|>"
    tokenizer.chat_template = qwen2_5_chat_template
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=8192, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    return Qwen2ForCausalLM(config), tokenizer


def test_one_grpo_step_on_cpu_with_the_worlds_rewards(tmp_path: Path) -> None:
    import torch
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    model, tokenizer = _tiny_model_and_tokenizer()
    dataset = adapter.task_dataset(World).select(range(2))
    environment = adapter.environment_factory(World)
    rewards = adapter.reward_functions(World)
    config = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=2,
                        num_generations=2, max_completion_length=8, max_steps=1,
                        logging_steps=1, report_to="none", use_cpu=True, bf16=False,
                        save_strategy="no", max_tool_calling_iterations=1, seed=0)
    trainer = GRPOTrainer(model=model, args=config, train_dataset=dataset,
                          processing_class=tokenizer, reward_funcs=rewards,
                          environment_factory=environment)
    trainer.train()
    logged = next(entry for entry in trainer.state.log_history if "reward" in entry)
    print("TRL step log:", json.dumps(logged, sort_keys=True))
    assert trainer.state.global_step == 1
    used = trainer.environments
    assert used and all(isinstance(env, environment) for env in used)
    assert {env._task for env in used} <= set(dataset["task"])
    # the logged task reward is the mean of the world's scores of the environments used
    scores = [env._score([])["reward"] for env in used]
    assert logged["rewards/task_reward/mean"] == pytest.approx(sum(scores) / len(scores))
    assert any(key.startswith("rewards/check_") for key in logged)
