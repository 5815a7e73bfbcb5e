defmodule BlElixir.Sum do
  @moduledoc "Helper of bl_elixir, compiled with it."
  def upto(n), do: Enum.sum(1..n)
end
