"""Settings read from the environment (django-environ).

With no environment at all this is the embedded default: SQLite, eager Celery, a file
cache, DEBUG on, so that one command brings up a working demo anywhere. Set
``DATABASE_URL`` (PostgreSQL) and ``CELERY_BROKER_URL`` (Redis) for the real thing;
``config.settings.production`` adds the deployment hardening on top.
"""

import os
import tempfile
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from core.csp import directives_from_string

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# The default key is for the embedded demo only; production.py refuses to start with it.
INSECURE_DEFAULT_SECRET_KEY = "django-insecure-embedded-demo-key-never-use-in-production"  # noqa: S105
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=INSECURE_DEFAULT_SECRET_KEY)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    # Swagger UI's files served from our own origin: the CSP allows no CDN.
    "drf_spectacular_sidecar",
    # Query-parameter filters of the research API's lists.
    "django_filters",
    # The Content-Security-Policy header (its system checks need the app installed).
    "csp",
    "core",
    "annotation",
    "evaluation",
    "challenges",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before anything reads the query or the body: NUL in a parameter is a 400, an API body declared
    # over API_MAX_BODY_BYTES a 413 (core.request_guard).
    "core.request_guard.RequestGuardMiddleware",
    # Near the top, so that it also marks the answers other middleware make (redirects, CSRF 403).
    "core.middleware.ResearchNoStoreMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: the interface language is the annotator's choice, stored on their profile.
    "annotation.middleware.InterfaceLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Jobs a request starts run on the local worker thread in the embedded default (core.jobs.local).
    "core.jobs.local.LocalJobsMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's, with the header text built once per policy (core.middleware).
    "core.middleware.CachedCSPMiddleware",
    # Last: a domain error a page's view lets through becomes its error page (core.errors).
    "core.errors.DomainErrorMiddleware",
]

# Research data: `Cache-Control: private, no-store` on every answer under these (core.middleware).
NO_STORE_PATH_PREFIXES = ["/api/", "/reports/", "/exports/"]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.views.nav",
                "annotation.context_processors.interface_language",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
# Reuse connections but check them before use, so that a killed connection
# costs only the request in flight and the next request reconnects by itself.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DJANGO_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite: wait for the write lock instead of failing at once when two requests write.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 20, "transaction_mode": "IMMEDIATE"})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Django 6 behaviour now: URL fields in forms assume https when no scheme is given.
FORMS_URLFIELD_ASSUME_HTTPS = True

# --- Cache (login rate limits must be shared by every server process) ------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # A file cache is shared by every process on the machine, which is enough for the demo.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": env.str("DJANGO_CACHE_DIR", default=str(BASE_DIR / ".cache" / "django")),
        }
    }
# Login attempts per address and per user name in any sliding window (core/ratelimit.py). Its
# counters are in the default cache: Redis, atomic across processes, in production; the demo's
# file cache is shared by one machine's processes but its increments are not atomic.
LOGIN_RATE_LIMIT = env.str("LOGIN_RATE_LIMIT", default="10/m")

# --- Auth -------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = ["annotation.auth.AnnotatorAwareBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"  # sends each role to its own area (core.views.home)
LOGOUT_REDIRECT_URL = "login"

# --- i18n -------------------------------------------------------------------------------
# The annotator interface speaks these languages (locale/<code>/LC_MESSAGES, docs/managers.md
# "Interface languages and guidelines"); manager and researcher pages stay in English. An annotator's choice is stored on
# their profile; without one a batch screen speaks its campaign's language if it is listed here.
# Adding a language: add it here, then scripts/messages.sh and translate its .po files.
LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("ar", "العربية"),
    ("ja", "日本語"),
]
# Right-to-left interface languages (Django's list already holds ar, fa, he, ur, ...): the whole
# page is mirrored (<html dir="rtl">, CSS logical properties).
LANGUAGES_BIDI = ["ar", "ar-dz", "ckb", "fa", "he", "ps", "ug", "ur", "yi"]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static and media -------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.str("DJANGO_STATIC_ROOT", default=str(BASE_DIR / ".staticfiles"))
# In DEBUG, WhiteNoise serves straight from the source folders and only needs the root to exist.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)
MEDIA_URL = "media/"
MEDIA_ROOT = env.str("DJANGO_MEDIA_ROOT", default=str(BASE_DIR / "media"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# --- Uploads and images: refused unless an allowed format, within bounded size and pixels ---
IMAGE_MAX_BYTES = env.int("IMAGE_MAX_BYTES", default=25 * 1024 * 1024)
# Pillow raises DecompressionBombError above twice this; we refuse anything above it.
IMAGE_MAX_PIXELS = env.int("IMAGE_MAX_PIXELS", default=40_000_000)
# Memory a picture may take while it is checked, for the formats decoded whole (GIF, WEBP,
# interlaced PNG; annotation.services.images.decode_bytes). PNG and JPEG are checked in far less.
IMAGE_DECODE_MAX_BYTES = env.int("IMAGE_DECODE_MAX_BYTES", default=128 * 1024 * 1024)
IMAGE_ALLOWED_FORMATS = env.list("IMAGE_ALLOWED_FORMATS", default=["JPEG", "PNG", "WEBP", "GIF"])
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# JSON bodies of the API endpoints (core.parsers): a caption batch is a few KB.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=256 * 1024)
API_MAX_JSON_DEPTH = env.int("API_MAX_JSON_DEPTH", default=32)
# Admin imports wait here between their dry run and the manager's "Import" (annotation/admin/imports.py);
# several web processes must share it. Never served.
IMPORT_STAGING_DIR = env.str(
    "IMPORT_STAGING_DIR", default=str(Path(tempfile.gettempdir()) / "caption-eval-import-staging")
)

# --- Celery -----------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
# No broker configured: run tasks in-process (embedded default and tests).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
if CELERY_TASK_ALWAYS_EAGER and not CELERY_BROKER_URL:
    # Eager tasks never reach a broker, yet Celery builds a producer for each one sent: with no broker
    # named that was AMQP's, and kombu warned "No hostname was supplied" every time (scripts/demo.sh).
    # Celery reads broker_host when broker_url is None (not ""); the deploy checks still see no broker.
    CELERY_BROKER_URL = None
    CELERY_BROKER_HOST = "memory://localhost/"
# Eager Celery (the embedded default): a job started from a page runs on a local worker thread, so the
# page returns at once and shows the job's progress (core/jobs/local.py). Off: units are computed
# inside the request that sends them. Commands compute in-process either way.
JOBS_LOCAL_RUNNER = env.bool("JOBS_LOCAL_RUNNER", default=CELERY_TASK_ALWAYS_EAGER)
JOBS_LOCAL_THREADS = env.int("JOBS_LOCAL_THREADS", default=1)
# Hugging Face libraries offline in the embedded default: a model that is not on this machine fails at
# once with the loader's message instead of retrying downloads for minutes. HF_HUB_OFFLINE=0 in the
# environment (or HF_OFFLINE=false) lets them download.
HF_OFFLINE = env.bool("HF_OFFLINE", default=CELERY_TASK_ALWAYS_EAGER)
if HF_OFFLINE:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
# A worker that dies mid-task must not lose it: acknowledge after the work, requeue on loss.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 60 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 55 * 60
# Fail fast when the broker is down instead of hanging the request: annotation goes on, and
# starting a job says that it could not be queued.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# visibility_timeout: how long Redis waits before handing an unacknowledged task (its worker
# died) to another worker. It must exceed the longest task (CELERY_TASK_TIME_LIMIT), or a slow
# task would run twice; `manage.py metric_run resume` re-queues sooner by hand.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "visibility_timeout": 3900,
}
# Heartbeats, the orphan rule, the sweep and its beat schedule: config/settings/jobs.py.
from .jobs import *  # noqa: E402, F403

# --- REST framework ---------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
    # Bounded size and nesting, checked before parsing (core.parsers).
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Caption evaluation platform API",
    "DESCRIPTION": "Human evaluation of multilingual image captioning (XM3600 protocol).",
    "VERSION": "0.1.0",
}

# --- Security headers that hold everywhere ----------------------------------------------
# Pages load scripts and styles only from our own origin (no inline script or style, no CDN), so
# markup smuggled into a caption can neither run nor pull anything in, even if escaping failed.
# django-csp sends it on every response; override the whole policy with the
# CONTENT_SECURITY_POLICY environment variable, written as the header is (core.csp parses it and
# refuses unknown directives).
DEFAULT_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
try:
    CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": directives_from_string(
            env.str("CONTENT_SECURITY_POLICY", default=DEFAULT_CONTENT_SECURITY_POLICY)
        )
    }
except ValueError as exc:  # an empty or mistyped policy stops the start, naming the variable
    raise ImproperlyConfigured(f"CONTENT_SECURITY_POLICY: {exc}") from None
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_AGE = env.int("SESSION_COOKIE_AGE", default=60 * 60 * 12)
# Django's database sessions, with the read each request makes built once per thread (core.sessions).
SESSION_ENGINE = "core.sessions"

# --- Metrics ---------------------------------------------------------------------------
# CLIPScore model: an open_clip model name with a pretrained tag, or a local checkpoint file
# (machines without internet). See evaluation/metrics/clip/loading.py and docs/metrics.md.
CLIP_MODEL = env.str("CLIP_MODEL", default="xlm-roberta-base-ViT-B-32")
CLIP_PRETRAINED = env.str("CLIP_PRETRAINED", default="laion5b_s13b_b90k")
CLIP_CHECKPOINT = env.str("CLIP_CHECKPOINT", default="")
# Empty by default: an English prompt before a non-English caption mixes languages
# (docs/metrics.md, "CLIPScore and RefCLIPScore").
CLIP_PROMPT_PREFIX = env.str("CLIP_PROMPT_PREFIX", default="")
# How image pixels reach CLIP: "exif" turns them upright by the EXIF orientation tag, as annotators see
# them (the platform's choice); "stored" takes them as stored, as jmhessel's reference CLIPScore code does
# (rotated photos then score differently). A metric run records it in params["image_orientation"], and
# the start form, API, `metric_run start` and `score_captions` can override it per run.
CLIP_IMAGE_ORIENTATION = env.str("CLIP_IMAGE_ORIENTATION", default="exif")
if CLIP_IMAGE_ORIENTATION not in ("exif", "stored"):
    raise ImproperlyConfigured(
        f"CLIP_IMAGE_ORIENTATION must be exif or stored, not {CLIP_IMAGE_ORIENTATION!r}"
    )
# A language whose text→image R@1 on a retrieval check is below this fraction of English's R@1 on the
# same check is flagged "CLIP-based scores unreliable here" wherever its CLIPScore is shown. 0.5:
# in seed 004's XM3600 table (Table 11), the default model (OpenCLIP XLM-R B-32, English R@1 48.4)
# keeps 0.81 × English or more in 28 of the 35 other languages (ar 0.81, most above 1) and falls to
# 0.35 × or less in the other 7 (hi 0.35, fil 0.15, quz 0.06, bn, sw 0.05, mi, te 0.01): any ratio
# between 0.36 and 0.80 splits them the same way, and one half sits in that gap with room both sides.
CLIP_UNRELIABLE_R1_RATIO = env.float("CLIP_UNRELIABLE_R1_RATIO", default=0.5)
if not 0 < CLIP_UNRELIABLE_R1_RATIO <= 1:
    raise ImproperlyConfigured(f"CLIP_UNRELIABLE_R1_RATIO must be in (0, 1], not {CLIP_UNRELIABLE_R1_RATIO}")
# The two other probes of the CLIP trust verdict (docs/clip-checks.md): a language is also flagged when
# its zero-shot top-1 accuracy is below CLIP_UNRELIABLE_ZEROSHOT_RATIO × English's on the same classes
# and images, or its foil accuracy below CLIP_UNRELIABLE_FOIL_RATIO × English's on the same pairs
# translated. 0.5 for zero-shot: in seed 004's Table 2 the default model (OpenCLIP XLM-R B-32, English
# 62.3) keeps 0.63 × English on average in high-resource languages and 0.50 × in mid-resource ones, and
# falls to 0.29 × (low) and 0.19 × (very low), the groups whose retrieval also fails; the same ratio as
# retrieval's. 0.9 for foils: chance is 0.5, so ratios are compressed; in seed 001's Table 4 (VALSE
# translated) the untuned model keeps 0.92 × English or more in eight of nine languages and 0.86 × in
# Korean, the one language within 9 points of chance.
CLIP_UNRELIABLE_ZEROSHOT_RATIO = env.float("CLIP_UNRELIABLE_ZEROSHOT_RATIO", default=0.5)
CLIP_UNRELIABLE_FOIL_RATIO = env.float("CLIP_UNRELIABLE_FOIL_RATIO", default=0.9)
for _name in ("CLIP_UNRELIABLE_ZEROSHOT_RATIO", "CLIP_UNRELIABLE_FOIL_RATIO"):
    if not 0 < globals()[_name] <= 1:
        raise ImproperlyConfigured(f"{_name} must be in (0, 1], not {globals()[_name]}")
# Bootstrap resamples of a foil check's per-phenomenon accuracy intervals.
CLIP_FOIL_BOOTSTRAP = env.int("CLIP_FOIL_BOOTSTRAP", default=1000)
# CLIP inference speed (docs/metrics.md, "How a worker embeds, and how fast"). CLIP_TORCH_THREADS: torch's CPU threads
# per worker process (0: torch's default, one per core); give each of N worker processes on a machine
# cores/N. CLIP_IMAGE_LOADER_THREADS: threads decoding the next batch of images while the model works
# on this one (0: decode in line). CLIP_TEXT_BATCH_SIZE: texts per forward pass (batches are formed by
# length and padded to their longest text; 0: by device, 64 on a CPU, 1024 on CUDA). CLIP_AUTOCAST: '' computes in fp32; 'bf16' or 'fp16' runs
# the forward passes in half precision (CUDA, and 'bf16' on CPUs with native bf16: AVX512_BF16 or AMX;
# slower on CPUs without it); each worker
# first checks on a sample that no CLIPScore moves by more than CLIP_AUTOCAST_TOLERANCE against fp32.
CLIP_TORCH_THREADS = env.int("CLIP_TORCH_THREADS", default=0)
CLIP_IMAGE_LOADER_THREADS = env.int("CLIP_IMAGE_LOADER_THREADS", default=2)
CLIP_TEXT_BATCH_SIZE = env.int("CLIP_TEXT_BATCH_SIZE", default=0)
CLIP_AUTOCAST = env.str("CLIP_AUTOCAST", default="")
CLIP_AUTOCAST_TOLERANCE = env.float("CLIP_AUTOCAST_TOLERANCE", default=0.01)
if CLIP_AUTOCAST not in ("", "bf16", "fp16"):
    raise ImproperlyConfigured(f"CLIP_AUTOCAST must be empty, bf16 or fp16, not {CLIP_AUTOCAST!r}")
# CLIP_IMAGE_PIPELINE (docs/clip-on-gpu.md): 'pil' decodes and resizes with PIL as open_clip does;
# 'tensor' decodes JPEGs on the GPU and resizes as tensor ops (for GPU workers; scores within the
# documented tolerance of PIL's, recorded in the run's signature).
CLIP_IMAGE_PIPELINE = env.str("CLIP_IMAGE_PIPELINE", default="pil")
if CLIP_IMAGE_PIPELINE not in ("pil", "tensor"):
    raise ImproperlyConfigured(f"CLIP_IMAGE_PIPELINE must be pil or tensor, not {CLIP_IMAGE_PIPELINE!r}")
# CLIP_TEXT_PACKING (docs/clip-on-gpu.md): 'auto' packs texts without padding into the text tower (the
# CLIP and XLM-R kinds) on CUDA where that removes enough padding; 'on' wherever the tower allows; 'off' never.
# CLIP_COMPILE: 'off'; 'compile' runs the text passes under torch.compile; 'reduce-overhead' also as CUDA
# graphs (GPU workers; each shape compiles once per worker process). Neither changes the numbers beyond
# float rounding, so neither enters a run's parameters: they are the worker's settings alone.
CLIP_TEXT_PACKING = env.str("CLIP_TEXT_PACKING", default="auto")
CLIP_COMPILE = env.str("CLIP_COMPILE", default="off")
if CLIP_TEXT_PACKING not in ("auto", "on", "off"):
    raise ImproperlyConfigured(f"CLIP_TEXT_PACKING must be auto, on or off, not {CLIP_TEXT_PACKING!r}")
if CLIP_COMPILE not in ("off", "compile", "reduce-overhead"):
    raise ImproperlyConfigured(f"CLIP_COMPILE must be off, compile or reduce-overhead, not {CLIP_COMPILE!r}")
if CLIP_TORCH_THREADS < 0 or CLIP_IMAGE_LOADER_THREADS < 0 or CLIP_TEXT_BATCH_SIZE < 0:
    raise ImproperlyConfigured(
        "CLIP_TORCH_THREADS, CLIP_IMAGE_LOADER_THREADS and CLIP_TEXT_BATCH_SIZE must be 0 or more"
    )
# Captions per CLIP chunk of a metric run: the unit a worker takes, retries and resumes.
METRIC_CLIP_CHUNK_SIZE = env.int("METRIC_CLIP_CHUNK_SIZE", default=256)
# CLIP fine-tuning (docs/metrics.md, "Fine-tuning CLIPScore on the platform's own judgments"): run folders (resumable
# training state, data snapshot, the fine-tuned weights) live here, on a disk every training worker
# shares; not under MEDIA_ROOT, which may be served. A language needs CLIP_FINETUNE_MIN_RATINGS rated
# captions (NOT-ENOUGH-INFO aside) before a run will train on it.
CLIP_FINETUNE_DIR = env.str("CLIP_FINETUNE_DIR", default=str(BASE_DIR / "var" / "clip-finetune"))
CLIP_FINETUNE_MIN_RATINGS = env.int("CLIP_FINETUNE_MIN_RATINGS", default=30)
# METEOR runs the METEOR 1.5 jar under Java (docs/metrics.md, "METEOR"). Empty METEOR_JAR: the jar that ships
# with pycocoevalcap. METEOR_JAVA: the java executable (name on the PATH or a path). One scoring call
# (one system's text chunk) is stopped after METEOR_TIMEOUT_SECONDS; the other metrics are kept.
METEOR_JAR = env.str("METEOR_JAR", default="")
METEOR_JAVA = env.str("METEOR_JAVA", default="java")
METEOR_TIMEOUT_SECONDS = env.float("METEOR_TIMEOUT_SECONDS", default=900)

# --- Annotation defaults ----------------------------------------------------------------
ANNOTATION_DEFAULT_LEASE_MINUTES = env.int("ANNOTATION_DEFAULT_LEASE_MINUTES", default=60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("DJANGO_LOG_LEVEL", default="WARNING")},
}

# Workforce quality (docs/managers.md, "Workforce quality: typing checks, image reports, hours").
# Reports of a problem with an image ("broken", "offensive", "private") by this many different
# trusted reporters in one campaign take the image out of that campaign's pool until a manager puts
# it back (docs/crowd-quality.md: who is trusted; a manager may extend it to every campaign).
IMAGE_REPORT_THRESHOLD = env.int("IMAGE_REPORT_THRESHOLD", default=2)
# What a crowd batch must contain to count (annotation.workforce.counting): at most this share of its
# images rated NOT-ENOUGH-INFO, and at most this share left without a caption. A batch of a participant
# from an entry link that leaves more is kept, held for a manager's review, and earns no completion code.
CROWD_MAX_UNANSWERED_SHARE = env.float("CROWD_MAX_UNANSWERED_SHARE", default=0.5)
# Screen 2 typing checks: a caption is flagged when pasted text makes up at least this share of it,
# or when it was typed faster than this many characters a second (from the first key to the last,
# or between two draft saves the server received), or when TYPING_MIN_CHARS characters or more
# reached the server in one draft save; the speed and whole-save checks apply to captions of at
# least TYPING_MIN_CHARS characters (docs/crowd-quality.md).
TYPING_PASTED_SHARE = env.float("TYPING_PASTED_SHARE", default=0.5)
TYPING_MAX_CHARS_PER_SECOND = env.float("TYPING_MAX_CHARS_PER_SECOND", default=15.0)
TYPING_MIN_CHARS = env.int("TYPING_MIN_CHARS", default=20)

# --- Evaluation server (challenges) ------------------------------------------------------------
# A submission file's size, what a zip may inflate to, its members, a caption's length.
SUBMISSION_MAX_BYTES = env.int("SUBMISSION_MAX_BYTES", default=50 * 1024 * 1024)
SUBMISSION_MAX_UNZIPPED_BYTES = env.int("SUBMISSION_MAX_UNZIPPED_BYTES", default=200 * 1024 * 1024)
SUBMISSION_MAX_ZIP_MEMBERS = env.int("SUBMISSION_MAX_ZIP_MEMBERS", default=100)
SUBMISSION_MAX_CAPTION_CHARS = env.int("SUBMISSION_MAX_CAPTION_CHARS", default=2000)
# Refused files per account and per team in any sliding window (core/ratelimit.py): past it, uploads are
# refused before their body is read until the window has room again. Accepted files do not count.
SUBMISSION_REFUSED_RATE = env.str("SUBMISSION_REFUSED_RATE", default="20/h")
# How long an invitation link stays valid.
INVITATION_DAYS = env.int("INVITATION_DAYS", default=14)
# Unused, unexpired invitation links a team's members may hold at once (hosts are not limited).
TEAM_OPEN_INVITATIONS = env.int("TEAM_OPEN_INVITATIONS", default=10)
