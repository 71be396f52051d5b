"""Authentication backend that loads a user's annotator profile with the user.

Every annotator request needs both; loading them in one query saves one per request, and the query's
SQL is built once per thread (core.compiled_reads), not on every request. The row is still read on
every request, so a deactivated account or a changed password takes effect at the next request. Login's
user lookup is retried once on a new connection when the database connection drops under it.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from core.compiled_reads import CompiledRead
from core.login import retry_if_connection_dropped

_USER_READ = CompiledRead(
    get_user_model(),
    lambda pk: get_user_model()._default_manager.select_related("annotator").filter(pk=pk),
    {"pk": int},
)


class AnnotatorAwareBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        """ModelBackend's, with the lookup retried once if the connection drops (a read: safe)."""
        model = get_user_model()
        if username is None:
            username = kwargs.get(model.USERNAME_FIELD)
        if username is None or password is None:
            return None
        try:
            user = retry_if_connection_dropped(lambda: model._default_manager.get_by_natural_key(username))
        except model.DoesNotExist:
            # Hash once anyway, so a missing account takes as long as a wrong password (Django #20760).
            model().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None

    def get_user(self, user_id):
        user = _USER_READ.read(pk=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
