"""The annotation data model.

A campaign (of a kind) holds items; an item is one thing to judge. An annotator asks for
work and gets a batch; a batch is a list of assignments of items to that one annotator.
What the annotator produces hangs off the assignment:

* caption campaign: an image; a rating of the prompt system's English caption (screen 1),
  a draft and finally a written caption (screen 2);
* side-by-side campaign: an image with one caption of the base system m1 and one of the
  test system m2, shown left/right in an order drawn per assignment; a ``SxsJudgment``;
* verification (rating) campaign: an image with one human caption written in a caption
  campaign; a ``Rating`` of that caption on the same 5-level scale as screen 1.

The models live in modules by concern (catalog, people, campaigns, work, selection; recruitment in
annotation.workforce.models, quality in annotation.quality.models); every one is importable from here.
"""

from annotation.models.campaigns import (  # noqa: F401
    CAPPED_KINDS,
    UNCAPPED_CONTROL_KINDS,
    Campaign,
    CampaignGuidelines,
    CampaignKind,
    CampaignState,
    ControlKind,
    Item,
)
from annotation.models.catalog import (  # noqa: F401
    CaptioningSystem,
    Image,
    Language,
    SystemCaption,
    TextDirection,
    Tokenizer,
    image_upload_to,
)
from annotation.models.people import (  # noqa: F401
    Annotator,
    AnnotatorSkill,
    SkillLevel,
)
from annotation.models.selection import (  # noqa: F401
    ImageSelection,
    LanguageArea,
    SelectedImage,
    SelectedLanguage,
    SelectionLevel,
)
from annotation.models.work import (  # noqa: F401
    DONE_STATES,
    NOT_COUNTED_STATES,
    OPEN_BATCH_STAGES,
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    CaptionDraft,
    Rating,
    RatingQuerySet,
    RatingValue,
    Side,
    SxsChoice,
    SxsJudgment,
    WrittenCaption,
    WrittenCaptionQuerySet,
)
from annotation.quality.models import ImageReport, ImageWithdrawal, TypingRecord  # noqa: F401
from annotation.workforce.models import (  # noqa: F401
    BatchHold,
    CampaignOnboarding,
    CaptionReview,
    CrowdPlatform,
    Enrolment,
    EntryLink,
    HoldDecision,
    ReviewDecision,
    TutorialAnswer,
    TutorialAttempt,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
)
