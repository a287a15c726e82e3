from numpy import *  # noqa
import numpy
from numpy import random, linalg, fft  # noqa
__version__ = numpy.__version__
