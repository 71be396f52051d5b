from core.commands import DemoLoadCommand
from evaluation.demo.services import demo_results_load
from evaluation.models import MetricRun


class Command(DemoLoadCommand):
    help = (
        "Load the demo's finished, SIMULATED side-by-side set on top of load_demo: four simulated systems "
        "(sim-a … sim-d) with captions in German, Arabic and Japanese, two hand-written references per "
        "photo, three simulated raters per language whose judgments come from a seeded model, one closed "
        "side-by-side campaign per pair of systems and language (18), and one text-metric run per language "
        "(BLEU-1..4, ROUGE-L, CIDEr-D), so the report page shows correlations on first start. Idempotent; "
        "one transaction; the runs are computed when it commits (in this process with eager tasks)."
    )

    force_help = "Load even with DEBUG off: simulated judgments do not belong in a real deployment's numbers."
    refusal = (
        "this looks like a real deployment, and these are simulated judgments that would enter its reports."
    )

    loader = staticmethod(demo_results_load)

    def report(self, summary, options):
        out = self.stdout.write
        new_campaigns = sum(created for *_, created in summary.campaigns)
        out(
            f"Simulated set: 4 systems ({summary.systems_created} new); system captions {summary.captions} "
            f"({summary.captions_created} new); references {summary.references} ({summary.references_created} new); "
            f"simulated raters {summary.raters} ({summary.raters_created} new); side-by-side campaigns "
            f"{len(summary.campaigns)} ({new_campaigns} new, {summary.judgments_created} judgments)."
        )
        if options["dry_run"]:
            out(f"Metric runs: {summary.runs_created} would be created, {summary.runs_resumed} resumed.")
            return
        runs = MetricRun.objects.filter(pk__in=summary.run_ids).select_related("language").order_by("pk")
        for run in runs:
            out(f"Metric run #{run.pk} “{run.name}” [{run.language.code}]: {run.status}.")
        url = self.served_url(options)
        query = "&".join(f"runs={run_id}" for run_id in summary.run_ids)
        out("")
        out(f"Report (log in as researcher or manager): {url}reports/?{query}")
        ids = ",".join(map(str, summary.run_ids))
        out(f"Or: python manage.py report --runs {ids}   /   python manage.py correlate --runs {ids}")
        out("The side-by-side judgments of these campaigns are simulated (seeded model, not people).")
        for kind, check_id, created in summary.clip_checks:
            out(
                f"CLIP {kind} check #{check_id} on the tiny random-weight demo model ({'new' if created else 'kept'}): "
                "its numbers show the workflow, they are not results."
            )
