"""UserBench (TravelGym): multi-turn travel planning with a user who hides preferences (draft)."""
