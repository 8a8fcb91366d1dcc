unknown
