"""Decisions: the one decision writer every workflow goes through, who may decide (the
requester rule), operator keys, signing, the trusted-operators file, a trusting agent's checks
and the signature views the desk and the CLI show."""
