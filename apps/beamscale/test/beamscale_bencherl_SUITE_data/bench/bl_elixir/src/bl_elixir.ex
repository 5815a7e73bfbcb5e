# A bencherl handler written in Elixir: bench_args/2 and run/3 as bencherl calls them, a
# helper module in a second file of src/, data from bencherl's datadir.
defmodule BlElixir do
  def bench_args(:short, _conf), do: [[10], [20]]
  def bench_args(_version, _conf), do: [[100]]

  def run([n], _slaves, conf) do
    dir = :proplists.get_value(:datadir, conf)
    word = File.read!(Path.join(dir, "word.txt")) |> String.trim()
    IO.puts("#{word} #{BlElixir.Sum.upto(n)}")
  end
end
