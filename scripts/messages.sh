#!/usr/bin/env bash
# Refresh the annotator interface's message catalogues, then compile them.
#
#   scripts/messages.sh            every language of settings.LANGUAGES but English
#   scripts/messages.sh fr         one new language (add it to LANGUAGES too)
#
# Extracts every translatable string of the annotator-facing code (annotation/, core/, templates
# except the admin's and the research pages', static/js) into locale/<lang>/LC_MESSAGES/django.po
# and djangojs.po (makemessages: needs GNU gettext's xgettext, a developer tool only), keeping the
# translations already there, then compiles the .mo files with Babel (pure Python). New strings
# come out untranslated and tests/annotation/test_interface_language.py fails until someone
# translates them: fill in their msgstr and run this again. The .mo files are committed, so
# nothing of gettext is needed at run time or in the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.test}
if [ $# -gt 0 ]; then
  langs=("$@")
else
  mapfile -t langs < <($PY -c 'import django; django.setup(); from django.conf import settings; print("\n".join(c for c, _ in settings.LANGUAGES if c != settings.LANGUAGE_CODE))')
fi
args=()
for l in "${langs[@]}"; do args+=(-l "$l"); done
ignore=(--ignore '.venv/*' --ignore 'tests/*' --ignore 'benchmarks/*' --ignore 'scripts/*' --ignore 'media/*'
  --ignore '.staticfiles/*' --ignore 'evaluation/*' --ignore 'config/*' --ignore 'annotation/admin/*'
  --ignore 'annotation/management/*' --ignore 'annotation/importers/*' --ignore 'annotation/migrations/*'
  --ignore 'templates/admin/*' --ignore 'templates/evaluation/*')
$PY manage.py makemessages "${args[@]}" "${ignore[@]}" --no-obsolete --add-location=never
$PY manage.py makemessages -d djangojs "${args[@]}" "${ignore[@]}" --no-obsolete --add-location=never
$PY manage.py compile_translations
