import CCurl

extension HTTPClient {
    /// libcurl's version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.x ...".
    public static var libcurlVersion: String { String(cString: curl_version()) }
}
