"""uint8 image processing: grayscale by weighted sum, normalisation to [0, 1] and back,
clipping, thresholding, a histogram by bincount, gamma correction, blending.

Idioms: "img.astype(np.float32) / 255", "np.clip(x * 255, 0, 255).astype(np.uint8)",
rgb @ [0.299, 0.587, 0.114], "img[img > 128] = 255" thresholds, np.bincount(img.ravel(), minlength=256)."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
h = max(int((N / 3) ** 0.5), 4)
w = h + 3

idx = np.arange(h * w * 3)
img = ((idx * 37 + idx // 7) % 256).astype(np.uint8).reshape(h, w, 3)
gray = img @ np.array([0.299, 0.587, 0.114])
R["gray"] = gray
gray8 = gray.round().astype(np.uint8)
R["gray8"] = gray8
f = img.astype(np.float32) / 255
R["f"] = f
R["gamma"] = np.clip((f ** 2.2) * 255, 0, 255).astype(np.uint8)
bright = img + 50
R["bright_wrap"] = bright
bright2 = np.clip(img.astype(np.int16) + 50, 0, 255).astype(np.uint8)
R["bright_clip"] = bright2
th = gray8.copy()
th[th > 128] = 255
th[th <= 128] = 0
R["thresh"] = th
R["hist"] = np.bincount(gray8.ravel(), minlength=256)
cdf = R["hist"].cumsum()
cdf_n = (cdf - cdf.min()) * 255 // (cdf.max() - cdf.min())
R["equalised"] = cdf_n.astype(np.uint8)[gray8]
alpha = 0.3
blend = (alpha * img + (1 - alpha) * img[::-1]).astype(np.uint8)
R["blend"] = blend
R["mean_u8"] = img.mean(axis=(0, 1))
R["max_u8"] = img.max(axis=2)
R["inv"] = 255 - img
R["abs_diff"] = np.abs(img.astype(np.int16) - img[:, ::-1].astype(np.int16)).astype(np.uint8)
R["u8_avg_wrong"] = (img[..., 0] + img[..., 1]) // 2
R["u8_avg_right"] = ((img[..., 0].astype(np.uint16) + img[..., 1]) // 2).astype(np.uint8)
flip = img[:, ::-1, :]
R["flip_copy"] = flip.copy()
crop = img[2:-2, 3:-3]
crop //= 2
R["img_after_crop"] = img
R["channels_first"] = np.transpose(img, (2, 0, 1)).sum(axis=(1, 2))
R["bool_img"] = (gray8 > 100) & (gray8 < 200)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
