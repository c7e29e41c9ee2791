"""Mnemo as an OAuth 2.1 resource server (docs/auth.md): bearer JWTs of the configured issuers,
checked against each issuer's published keys. Nothing here issues a token.

``keys`` fetches and caches an issuer's metadata and key set (bounded in time, size and rate);
``verifier`` checks one token (PyJWT) and returns its claims. The service turns claims into a
caller through the principals bound to workspaces (``service.principals``)."""
