print("hls-origin")
