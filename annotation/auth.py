"""Authentication backend that loads a user's annotator profile with the user.

Every annotator request needs both; loading them in one query saves one per request.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class AnnotatorAwareBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        try:
            user = model._default_manager.select_related("annotator").get(pk=user_id)
        except model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
