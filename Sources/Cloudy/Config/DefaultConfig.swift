/// The config Cloudy runs when no `--config.file` is given: five well-known cities on five
/// continents, fetched from the public Open-Meteo every ten minutes.
public enum DefaultConfig {
    public static let yaml = """
        # Cloudy's embedded default config (used when --config.file is not given).
        provider:
          name: open-meteo
          url: https://api.open-meteo.com
        refresh:
          interval: 10m
          timeout: 10s
          stale_after: 30m
        units:
          temperature: celsius
          wind_speed: meters_per_second
          time: 24h
        forecast:
          days: 7
          hours: 24
        locations:
          - name: Berlin
            latitude: 52.52
            longitude: 13.41
          - name: New York
            latitude: 40.7143
            longitude: -74.006
          - name: Tokyo
            latitude: 35.6895
            longitude: 139.6917
          - name: Sydney
            latitude: -33.8679
            longitude: 151.2073
          - name: Cape Town
            latitude: -33.9258
            longitude: 18.4232

        """

    public static let fileName = "<embedded default config>"
}
