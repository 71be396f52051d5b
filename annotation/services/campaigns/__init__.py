"""Campaign life cycle: create, draft -> open -> closed, and the items a campaign offers.

A caption campaign gains items when it opens (every image with a file and a prompt
caption). A side-by-side or verification campaign gets its items once, when it is
created: they are the (possibly sampled) image set, stored with the seed that drew it.

Shared checks and limits in ``checks``; caption campaigns, opening and closing in ``lifecycle``;
side-by-side and verification campaigns in ``judgments``. Every service is importable from here.
"""

from annotation.services.campaigns.checks import (  # noqa: F401
    MAX_BATCH_SIZE,
    MAX_REPLICATION,
    PROMPT_LANGUAGE,
    SEED_MAX,
)
from annotation.services.campaigns.judgments import rating_campaign_create, sxs_campaign_create  # noqa: F401
from annotation.services.campaigns.lifecycle import (  # noqa: F401
    campaign_close,
    campaign_items_sync,
    campaign_open,
    caption_campaign_create,
)
