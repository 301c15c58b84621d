print("hlsplay")
