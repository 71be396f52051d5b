"""The project manager's side of recruitment and onboarding, in the admin.

* Entry links: made by a form that calls ``entry_link_create`` (a fresh token), listed with their
  state and sign-ups, revoked by an action; the change page gives the URLs to paste into Prolific
  and MTurk.
* Participants (enrolments): read-only, with the crowd ids; project managers only (the ids are
  personal data: researchers, who read the rest of the admin, do not see them).
* Onboarding and pilot settings per campaign, and the tutorial's gold items: whether a constant
  answer passes the gold set is checked whenever an item is saved or deleted (a warning) and when
  the tutorial is switched on (refused); tutorial results with their verdict, with an action that
  allows another attempt; the pilot review page.
* A panel on each campaign's page sums it up (``annotation.admin.panels``).

Importing this package registers every model admin (``links``, ``onboarding``) and the panel (``panel``).
"""

from annotation.workforce.admin import links, onboarding, panel  # noqa: F401  (registration on import)
from annotation.workforce.admin.links import MTURK_QUERY, PROLIFIC_QUERY  # noqa: F401
from annotation.workforce.admin.managers import ManagersOnlyAdmin, managers_only  # noqa: F401
from annotation.workforce.admin.onboarding import constant_pass_warning  # noqa: F401
