from django.conf import settings


class ContentSecurityPolicyMiddleware:
    """Adds the Content-Security-Policy header to every response (RELIABILITY 20).

    The pages load scripts and styles only from our own origin, so markup smuggled into a
    caption can neither run script nor pull in anything from outside, even if escaping failed.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request):
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response
