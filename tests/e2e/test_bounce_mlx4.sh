#!/bin/bash
# test_bounce.sh with mlx4-style verbs events (see there for what it asserts).
exec bash "$(dirname "$0")/test_bounce.sh" mlx4
