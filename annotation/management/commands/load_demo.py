from annotation.services.demo import demo_load
from core.commands import DemoLoadCommand


class Command(DemoLoadCommand):
    help = (
        "Load the demo (real photographs from scikit-image, two captioning systems, German, Arabic "
        "and Japanese, demo accounts, one open caption campaign per language, an open side-by-side "
        "campaign in German) and print the logins. Idempotent."
    )

    force_help = "Load even with DEBUG off: the demo accounts have a published password."
    refusal = "this looks like a real deployment, and the demo accounts have a published password."

    loader = staticmethod(demo_load)

    def report(self, summary, options):
        out = self.stdout.write
        out(
            f"Images: {summary.images} ({summary.images_created} new); system captions (English, German): "
            f"{summary.captions} ({summary.captions_created} new); accounts: {len(summary.accounts)} "
            f"({summary.users_created} new)."
        )
        for name, code, state in summary.campaigns:
            out(f"Campaign “{name}” [{code}]: {state}.")
        out("")
        url = self.served_url(options)
        out(f"Open {url}  (admin: {url}admin/)")
        out("")
        width = max(len(a.username) for a in summary.accounts)
        out(f"{'login':<{width}}  {'password':<16}  role")
        for account in summary.accounts:
            role = account.role
            if account.languages:
                role += " · " + ", ".join(f"{code} ({level})" for code, level in account.languages)
            out(f"{account.username:<{width}}  {summary.password:<16}  {role}")
        for note in summary.notes:
            out("")
            out(note)
        if not summary.users_created:
            out("(Accounts already existed: a password changed since the first run was left as it is.)")
