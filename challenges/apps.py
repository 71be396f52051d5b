from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "challenges"
    verbose_name = "Evaluation server"

    def ready(self):
        # The scoring job kind registers itself with the engine when its tasks module is imported.
        from challenges.scoring import tasks  # noqa: F401
