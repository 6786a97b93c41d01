"""The fake weather APIs behind Tests/Fakes/fake_weather.py, one module per API; see that file."""
