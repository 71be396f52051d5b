"""One rule decides which written captions count: every reader leaves out the same captions.

A caption a manager excluded after its typing review, the captions of a batch held for review, and
an empty caption (an image the annotator reported) are absent from the metric run's references,
the retrieval check's captions, the fine-tuning pairs, Table 1, the caption export and the API.
"""

from __future__ import annotations

import pytest

from annotation.models import AssignmentState, WrittenCaption
from annotation.quality.models import TypingRecord
from evaluation.finetune.plan import _campaign_data
from evaluation.human.selectors import caption_statistics_rows, reference_captions
from evaluation.metrics.references import reference_set_from_campaign
from evaluation.research.api.selectors import written_caption_list
from evaluation.research.exports.rows import written_captions
from evaluation.retrieval.plan import _campaign_captions
from evaluation.runs.selectors import reference_texts
from tests import factories as f


@pytest.fixture
def captions(db, german):
    """A caption campaign with 12 captions, of which 3 must not count (excluded, held, empty)."""
    campaign = f.open_caption_campaign(images=6, batch_size=3, replication=2, language=german)
    people = [f.AnnotatorFactory(user__username=n, languages=[german]) for n in ("rc-one", "rc-two")]
    f.written_captions(campaign, annotators=people, batches=2)
    every = list(WrittenCaption.objects.filter(campaign=campaign).order_by("pk"))
    assert len(every) == 12
    excluded, held, empty = every[0], every[4], every[8]
    TypingRecord.objects.update_or_create(
        assignment=excluded.assignment, defaults={"flags": "pasted", "review": "excluded"}
    )
    held.assignment.state = AssignmentState.HELD
    held.assignment.save(update_fields=["state"])
    WrittenCaption.objects.filter(pk=empty.pk).update(text="")
    return campaign, {excluded.text, held.text}, every


def test_every_reader_leaves_out_the_same_captions(captions):
    campaign, dropped, every = captions
    counted = {c.text for c in every if c.text not in dropped} - {every[8].text}
    assert len(counted) == 9

    assert {c.text for c in reference_captions(campaign_ids=[campaign.pk])} == counted
    reference_set = reference_set_from_campaign(campaign_id=campaign.pk)
    assert {t for texts in reference_texts(reference_set).values() for t in texts} == counted
    assert {text for _, text in _campaign_captions([campaign])[campaign.language.code]} == counted
    pairs, _ = _campaign_data([campaign])
    assert {text for _, text, _ in pairs} == counted
    assert caption_statistics_rows(campaign_id=campaign.pk)[0].n_captions == 9
    assert {text for _, _, text in written_captions(campaign)} == counted
    assert {c.text for c in written_caption_list().filter(campaign=campaign)} == counted
