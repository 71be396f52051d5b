"""``--batch-size auto`` for fine-tuning (evaluation/metrics/clip/finetune_memory.py): the choice from free
memory is plain arithmetic, tested here; the probe that measures a step's memory needs CUDA and says so
elsewhere."""

import pytest

from evaluation.metrics.clip.finetune_memory import StepMemory, batch_size_for_memory, probe_step_memory

GiB, MiB = 2**30, 2**20


def test_the_largest_batch_that_fits_the_free_memory_less_the_headroom():
    step = StepMemory(fixed=2 * GiB, per_sample=60 * MiB)
    # 40 GiB free, 15% headroom: 34 GiB usable, 32 GiB for samples: 546 fit, capped at 512.
    assert batch_size_for_memory(40 * GiB, step) == 512
    # 10 GiB free: 8.5 - 2 = 6.5 GiB: 110 fit, rounded down to a multiple of 8.
    assert batch_size_for_memory(10 * GiB, step) == 104
    assert batch_size_for_memory(10 * GiB, step, multiple=1) == 110
    assert batch_size_for_memory(10 * GiB, step, maximum=64) == 64
    assert batch_size_for_memory(10 * GiB, step, headroom=0) == 136
    # Rounding down to the multiple would go below the minimum: the unrounded size.
    assert batch_size_for_memory(int((2 * GiB + 5 * 60 * MiB) / 0.85) + 1, step) == 5


def test_a_batch_that_cannot_fit_says_how_much_memory_it_needs():
    step = StepMemory(fixed=2 * GiB, per_sample=60 * MiB)
    with pytest.raises(
        ValueError, match=r"a fine-tuning batch of 3 needs about 2\.56 GiB of GPU memory, 2\.00 GiB are free"
    ):
        batch_size_for_memory(2 * GiB, step)
    for kwargs, message in (
        ({"step": StepMemory(0, 0)}, "per-sample memory must be positive"),
        ({"headroom": 1.0}, "headroom must be in"),
        ({"maximum": 2}, "below the smallest"),
    ):
        with pytest.raises(ValueError, match=message):
            batch_size_for_memory(10 * GiB, **{"step": step, **kwargs})


def test_the_memory_probe_needs_cuda():
    with pytest.raises(ValueError, match="needs a CUDA device"):
        probe_step_memory(object(), "cpu")
