"""The explorer's tests share one headless Chromium (`browser.driver`)."""

from tests.leaderboard.explore.browser import driver  # noqa: F401 (a fixture)
