"""Authentication backend that loads a user's annotator profile with the user.

Every annotator request needs both; loading them in one query saves one per request. Login's user
lookup is retried once on a new connection when the database connection drops under it.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from core.login import retry_if_connection_dropped


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
        model = get_user_model()
        try:
            user = model._default_manager.select_related("annotator").get(pk=user_id)
        except model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
