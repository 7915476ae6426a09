"""The demo, and what it and the test harness run on (the package never imports tests/): a free port and a poll,
a throwaway SerenMemory and the hand that reviews through its routes, a stand-in for the small model."""
