from challenges.demo import DEMO_TEAM_USER, demo_benchmark_load
from core.commands import DemoLoadCommand


class Command(DemoLoadCommand):
    help = (
        "Load the demo's evaluation-server benchmark on top of load_demo and load_demo_results: validation and "
        "test phases on the demo photos, three simulated teams' entries, a baseline, the human row, and the team "
        "account team-demo that can submit. Idempotent; one transaction; the entries are scored when it commits."
    )
    force_help = "Load even with DEBUG off: a published team password does not belong in a real deployment."
    refusal = "this looks like a real deployment, and the demo team's password is published."

    loader = staticmethod(demo_benchmark_load)

    def report(self, summary, options):
        url = self.served_url(options)
        if not summary.created:
            self.stdout.write("The demo benchmark exists already; nothing changed.")
        else:
            self.stdout.write(
                f"Demo benchmark with {len(summary.submissions)} scored entries (simulated systems)."
            )
        self.stdout.write(
            f"Team login: {DEMO_TEAM_USER} (the demo password) at {url}challenges/{summary.benchmark_slug}/"
        )
