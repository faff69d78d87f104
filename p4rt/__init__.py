"""P4Runtime's vocabulary shared by the controller and the softswitch's P4Runtime server: the
canonical byte strings (``bytes_utils``) and one P4Info index by name and by id (``context``)."""

from .bytes_utils import decode, encode
from .context import P4InfoIndex

__all__ = ["P4InfoIndex", "decode", "encode"]
