"""The research REST API: read-only endpoints over the platform's data and results, and one write
(start a metric run).

Who reaches it (docs/reliability.md, "Access"): members of the "Researchers" or "Project managers" groups and
superusers, by token (``Authorization: Token <key>``) or by session (CSRF enforced on writes).
Everyone else, annotators included, gets 401 (no credentials) or 403, on every endpoint, the schema
and the docs. Annotators appear only by their pseudonym, never their user name; caption drafts and
work in batches not yet submitted are never exposed.

* :mod:`.apis`: one class per operation, each with its nested filter / input / output serializers;
* :mod:`.selectors`: the reads the endpoints need (progress per campaign, the comparisons that feed
  the correlation endpoint);
* :mod:`.serializers`: the strict base serializers and the outputs that are not one endpoint's own;
* :mod:`.docs`: the OpenAPI schema and the Swagger UI page, served from our own origin under the CSP.
"""
